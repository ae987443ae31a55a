package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/ruleset"

	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The linux tier's second line is a Landlock ruleset (applyLandlock,
// landlock_linux.go, which the exec stage still uses): read everywhere;
// write only beneath the private /tmp and /dev/shm, the writable roots,
// the stage and the layered scratch directories, and on a few devices;
// signals and abstract unix sockets scoped to the sandbox. PID 1 builds
// the same ruleset in two parts, so that its fork thread, on the run's
// path, only enforces it:
//
//   - before its config (prepareInterim): the ruleset itself, by
//     go-landlock with the same configuration and best-effort
//     negotiation, holding the rules for /tmp, /dev/shm and the devices,
//     made from the prepared mounts that become them;
//   - at the end of the root's build (setupRoot, before it is sealed):
//     the read rule for the private root and the write rules for the
//     writable roots, the stage and the layered scratch directories, each
//     made from what the command will see at that path then (the same
//     file, reached through the interim root; Landlock's rules belong to
//     files, not to paths), with the rights go-landlock gives such a rule
//     at the negotiated ABI.
//
// A prepared mount that something of the run's root is mounted over (a
// writable root at /tmp) keeps its rule but is out of the command's reach;
// the rule for what covers it comes from the run's own list.

// pid1Rules is the ruleset PID 1 builds for its fork thread. Written by
// the main thread before the fork thread's job is posted.
var pid1Rules = struct {
	prepared bool
	fd       int    // -1: nothing to enforce at this ABI
	flags    uint32 // landlock_restrict_self flags
	abi      int
	roots    int   // write roots, for the report
	err      error // building failed: reported as failed, nothing enforced
}{fd: -1}

// Rights of the rules added after the config, as go-landlock's RODirs and
// RWDirs(...).WithRefer().WithResolveUnix() have them before they are cut
// to the handled ones.
const (
	pid1ReadRights  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	pid1WriteRights = pid1ReadRights | ruleset.WriteOnly | llsys.AccessFSRefer | llsys.AccessFSResolveUnix
)

// pid1LandlockConfig is applyLandlock's configuration.
func pid1LandlockConfig() landlock.Config {
	return landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS, Scoped: landlock.V11.Scoped}.BestEffort()
}

// preparePID1Rules creates the ruleset with the rules for the prepared
// /tmp, /dev/shm and devices (below pre, the interim root's preDir).
func preparePID1Rules(pre string) {
	r := &pid1Rules
	r.prepared, r.fd = true, -1
	if r.abi = landlockABI(); r.abi < 1 {
		return
	}
	devs := make([]string, len(sandboxDevices))
	for i, d := range sandboxDevices {
		devs[i] = pre + d
	}
	r.fd, r.flags, r.err = pid1LandlockConfig().NewRulesetFD(
		landlock.RWDirs(pre+"/tmp", pre+"/dev/shm").WithRefer().WithResolveUnix().IgnoreIfMissing(),
		landlock.RWFiles(devs...).WithIoctlDev().IgnoreIfMissing(),
	)
	if r.err != nil {
		r.fd = -1
		r.err = fmt.Errorf("landlock: %w", r.err)
	}
	r.roots = 2
}

// addRunRules adds the run's rules: root is the private root, write the
// paths beneath which the command may write, each as the private root
// shows it now (nr). A missing write path is skipped, as go-landlock's
// IgnoreIfMissing does.
func addRunRules(root string, write []string, nr func(string) string) {
	r := &pid1Rules
	if r.fd < 0 || r.err != nil {
		return
	}
	handled := ruleset.HandledFS(r.abi)
	add := func(p string, rights uint64) error {
		pfd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(pfd)
		if err := ruleset.AddPath(r.fd, pfd, rights&handled); err != nil {
			return fmt.Errorf("landlock_add_rule: %w", err)
		}
		return nil
	}
	if err := add(root, pid1ReadRights); err != nil {
		r.err = fmt.Errorf("landlock rule for /: %w", err)
		return
	}
	for _, w := range write {
		err := add(nr(w), pid1WriteRights)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			r.err = fmt.Errorf("landlock rule for %s: %w", w, err)
			return
		}
	}
	r.roots += len(write)
}

// enforcePID1Rules enforces the ruleset on the calling thread (PID 1's
// fork thread, which has no_new_privs) and reports it as applyLandlock
// does.
func enforcePID1Rules() Mechanism {
	r := &pid1Rules
	fd := r.fd
	r.fd = -1
	if fd >= 0 {
		defer unix.Close(fd)
	}
	switch {
	case !r.prepared:
		return Mechanism{"landlock", StateFailed, "ruleset not prepared"}
	case r.abi < 1:
		return Mechanism{"landlock", StateUnavailable, landlockMissing()} // explain_linux.go
	case r.err != nil:
		return Mechanism{"landlock", StateFailed, r.err.Error()}
	case fd < 0:
		return Mechanism{"landlock", StateUnavailable, fmt.Sprintf("ABI %d enforces none of the rights asked for", r.abi)}
	}
	if err := llsys.LandlockRestrictSelf(fd, r.flags); err != nil {
		return Mechanism{"landlock", StateFailed, fmt.Sprintf("landlock_restrict_self: %v", err)}
	}
	return Mechanism{"landlock", StateApplied, fmt.Sprintf("ABI %d: writes only to %d roots; signal and abstract-socket scopes", r.abi, r.roots)}
}

// dropPID1Rules closes a ruleset the run does not use (it takes the exec
// stage, which builds its own).
func dropPID1Rules() {
	if pid1Rules.fd >= 0 {
		unix.Close(pid1Rules.fd)
		pid1Rules.fd = -1
	}
}
