package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/ruleset"

	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// sandboxDevices are the device files a command may read and write.
var sandboxDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// landlockABI is the kernel's Landlock ABI version, 0 when it has none.
// Asked once per process (a stage asked it before its run): the running
// kernel's ABI does not change.
func landlockABI() int { return llABI() }

var llABI = sync.OnceValue(func() int {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 0 {
		return 0
	}
	return abi
})

// applyLandlock restricts the calling thread, which Init has locked and
// which then execs (exec stage) or forks (PID 1) the command, so the
// command inherits the domain (landlockThread). In the
// linux tier it is a second line behind the private root: read and
// execute everywhere, write only the writable roots, the staged view, the
// private /tmp and a few devices; network rights are left to the network
// namespace. In the landlock tier it is the filesystem confinement itself
// (see applyLandlockTier). Best effort: the ABI is negotiated with the
// kernel, and the result says which one applied.
func applyLandlock(cfg *initConfig) ([]Mechanism, error) {
	if cfg.Tier == BackendLandlock {
		return applyLandlockTier(cfg)
	}
	abi := landlockABI()
	if abi < 1 {
		return []Mechanism{{"landlock", StateUnavailable, landlockMissing()}}, nil // explain_linux.go
	}
	rw := []string{"/tmp", "/dev/shm"}
	rw = append(rw, cfg.Writable...)
	if cfg.StageLower != "" {
		rw = append(rw, cfg.StageLower)
	}
	rw = append(rw, cfg.Scratch...) // only the layered ones (mountScratch)
	if cfg.HostHome != "" {
		rw = append(rw, cfg.HostHome) // the private HOME placed there (placeHome)
	}
	c := landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS, Scoped: landlock.V11.Scoped}.BestEffort()
	enforced, err := landlockThread(c,
		landlock.RODirs("/"),
		landlock.RWDirs(rw...).WithRefer().WithResolveUnix().IgnoreIfMissing(),
		landlock.RWFiles(sandboxDevices...).WithIoctlDev().IgnoreIfMissing(),
	)
	if err != nil {
		return []Mechanism{{"landlock", StateFailed, err.Error()}}, nil
	}
	if !enforced {
		return []Mechanism{{"landlock", StateUnavailable, fmt.Sprintf("ABI %d enforces none of the rights asked for", abi)}}, nil
	}
	return []Mechanism{{"landlock", StateApplied, fmt.Sprintf("ABI %d: writes only to %d roots; signal and abstract-socket scopes", abi, len(rw))}}, nil
}

// applyLandlockTier is the landlock tier's confinement: reads only within
// the read view, writes only in the writable roots (which include the
// run's private temporary directory), TCP bind and connect refused unless
// the network was asked for, signals and abstract unix sockets scoped to
// the sandbox. It binds the calling thread (the exec stage's, which then
// execs; landlockThread). Without Landlock the tier cannot run: that is
// an error.
func applyLandlockTier(cfg *initConfig) ([]Mechanism, error) {
	return restrictThreadLandlock(cfg)
}

// restrictThreadLandlock applies the landlock tier's rules to the calling
// OS thread only (locked, and never unlocked by the caller): the exec
// stage then execs, or the runner forks the command from it and stays
// outside the sandbox's domain, so the command can neither signal nor
// trace it. no_new_privs is set on the thread too.
func restrictThreadLandlock(cfg *initConfig) ([]Mechanism, error) {
	fd, ms, err := tierRuleset(cfg) // tier_landlock_rules_linux.go
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := ruleset.Enforce(fd); err != nil {
		return nil, err
	}
	return ms, nil
}

// landlockThread enforces c and rules on the calling OS thread alone, with
// no_new_privs set on it first; false when there is nothing to enforce.
// The caller holds the thread locked and never unlocks it, and the
// command inherits the domain from it: a process started by execve or
// fork takes the credentials, and so the Landlock domain, of the thread
// that made the call. go-landlock's Config.Restrict instead stops every
// thread of the process in turn (psx signals each), which cost a stage
// milliseconds under load for threads that never run the command.
func landlockThread(c landlock.Config, rules ...landlock.Rule) (bool, error) {
	fd, flags, err := c.NewRulesetFD(rules...)
	if err != nil {
		return false, fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return false, nil
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return false, fmt.Errorf("no_new_privs: %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return false, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return true, nil
}

// unixSocketsConfined reports whether Landlock keeps connect(2) to the
// host's pathname unix sockets out (ABI 9). Below it the landlock tier
// refuses to create unix sockets when the network is off.
func unixSocketsConfined() bool { return landlockABI() >= 9 }

// dropCapsFor empties the capability sets. In the landlock tier an
// ordinary caller holds none and may not touch the bounding set; that is
// fine as long as nothing is held and exec cannot grant any (no_new_privs
// is set, and a uid other than 0 gains nothing on exec).
func dropCapsFor(cfg *initConfig) (Mechanism, error) {
	return capsDropped(cfg, dropCaps())
}

// capsDropped judges err, the result of emptying the calling thread's
// capability sets (dropCapsFor).
func capsDropped(cfg *initConfig, err error) (Mechanism, error) {
	if err == nil {
		return Mechanism{"capabilities", StateApplied, "all dropped, bounding set empty"}, nil
	}
	if cfg.Tier != BackendLandlock || !errors.Is(err, unix.EPERM) {
		return Mechanism{}, err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if cerr := unix.Capget(&hdr, &data[0]); cerr != nil {
		return Mechanism{}, fmt.Errorf("%w (capget: %w)", err, cerr)
	}
	held := data[0].Effective | data[0].Permitted | data[1].Effective | data[1].Permitted
	if held != 0 {
		return Mechanism{}, err
	}
	if os.Geteuid() == 0 && boundingSetNonEmpty() {
		return Mechanism{}, fmt.Errorf("uid 0 without CAP_SETPCAP cannot empty its bounding set, so an exec would regain capabilities: %w", err)
	}
	return Mechanism{"capabilities", StateApplied, "none held (ordinary user)"}, nil
}

// boundingSetNonEmpty reads the calling thread's CapBnd (the sets are
// per thread; /proc/self would show the main thread's).
func boundingSetNonEmpty() bool {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			return strings.Trim(strings.TrimSpace(v), "0") != ""
		}
	}
	return true
}
