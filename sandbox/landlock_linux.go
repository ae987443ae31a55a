package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// sandboxDevices are the device files a command may read and write.
var sandboxDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// landlockABI is the kernel's Landlock ABI version, 0 when it has none.
func landlockABI() int {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 0 {
		return 0
	}
	return abi
}

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
		return []Mechanism{{"landlock", StateUnavailable, "kernel has no Landlock"}}, nil
	}
	rw := []string{"/tmp", "/dev/shm"}
	rw = append(rw, cfg.Writable...)
	if cfg.StageLower != "" {
		rw = append(rw, cfg.StageLower)
	}
	rw = append(rw, cfg.Scratch...) // only the layered ones (mountScratch)
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
	c, rules, ms, err := landlockTierRules(cfg)
	if err != nil {
		return nil, err
	}
	enforced, err := landlockThread(c, rules...)
	if err != nil {
		return nil, err
	}
	if !enforced {
		return nil, errors.New("landlock: nothing to enforce")
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

// landlockTierRules builds the landlock tier's ruleset and the mechanisms
// it will report.
func landlockTierRules(cfg *initConfig) (landlock.Config, []landlock.Rule, []Mechanism, error) {
	abi := landlockABI()
	if abi < 1 {
		return landlock.Config{}, nil, nil, errors.New("kernel has no Landlock (needs Linux 5.13+ with landlock in the lsm= list)")
	}
	var ro, roFiles, rw, rwFiles []string
	for _, p := range cfg.ReadView {
		if isDir(p) {
			ro = append(ro, p)
		} else {
			roFiles = append(roFiles, p)
		}
	}
	for _, p := range cfg.Writable {
		if isDir(p) {
			rw = append(rw, p)
		} else {
			rwFiles = append(rwFiles, p)
		}
	}
	var handledNet landlock.AccessNetSet
	if !cfg.Network {
		handledNet = llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP
	}
	c := landlock.Config{
		HandledAccessFS:  landlock.V11.HandledAccessFS,
		HandledAccessNet: handledNet,
		Scoped:           landlock.V11.Scoped,
	}.BestEffort()
	rules := []landlock.Rule{
		landlock.RWFiles(sandboxDevices...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(ro) > 0 {
		rules = append(rules, landlock.RODirs(ro...).IgnoreIfMissing())
	}
	if len(roFiles) > 0 {
		rules = append(rules, landlock.ROFiles(roFiles...).IgnoreIfMissing())
	}
	if len(rw) > 0 {
		rules = append(rules, landlock.RWDirs(rw...).WithRefer().IgnoreIfMissing())
	}
	if len(rwFiles) > 0 {
		rules = append(rules, landlock.RWFiles(rwFiles...).IgnoreIfMissing())
	}
	ms := []Mechanism{{"landlock-fs", StateApplied,
		fmt.Sprintf("ABI %d: reads only the read view (%d paths), writes only %d roots and a private temporary directory", abi, len(cfg.ReadView), len(cfg.Writable))}}
	switch {
	case cfg.Network:
		ms = append(ms, Mechanism{"landlock-net", StateUnavailable, "network requested"})
	case abi >= 4:
		ms = append(ms, Mechanism{"landlock-net", StateApplied, "TCP bind and connect refused"})
	default:
		ms = append(ms, Mechanism{"landlock-net", StateUnavailable, fmt.Sprintf("ABI %d has no TCP rules (needs 4); seccomp refuses the sockets instead", abi)})
	}
	if abi >= 6 {
		ms = append(ms, Mechanism{"landlock-scope", StateApplied, "signals and abstract unix sockets stay inside the sandbox"})
	} else {
		ms = append(ms, Mechanism{"landlock-scope", StateUnavailable, fmt.Sprintf("ABI %d cannot scope signals or abstract unix sockets (needs 6)", abi)})
	}
	return c, rules, ms, nil
}

// unixSocketsConfined reports whether Landlock keeps connect(2) to the
// host's pathname unix sockets out (ABI 9). Below it the landlock tier
// refuses to create unix sockets when the network is off.
func unixSocketsConfined() bool { return landlockABI() >= 9 }

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// dropCapsFor empties the capability sets. In the landlock tier an
// ordinary caller holds none and may not touch the bounding set; that is
// fine as long as nothing is held and exec cannot grant any (no_new_privs
// is set, and a uid other than 0 gains nothing on exec).
func dropCapsFor(cfg *initConfig) (Mechanism, error) {
	err := dropCaps()
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

// boundingSetNonEmpty reads CapBnd from /proc/self/status.
func boundingSetNonEmpty() bool {
	b, err := os.ReadFile("/proc/self/status")
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
