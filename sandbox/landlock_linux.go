package sandbox

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// applyLandlock restricts the exec stage (and so the command) to reading
// and executing everywhere and writing only the writable roots, the staged
// view, the private /tmp and a few devices. Best effort: the ABI is
// negotiated with the kernel, and the result says which one applied.
// Network rights are left to the network namespace; signals and abstract
// unix sockets are scoped to the sandbox where the ABI has scopes.
func applyLandlock(cfg *initConfig) Mechanism {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return Mechanism{"landlock", StateUnavailable, fmt.Sprintf("kernel has no Landlock: %v", err)}
	}
	rw := []string{"/tmp", "/dev/shm"}
	rw = append(rw, cfg.Writable...)
	if cfg.StageLower != "" {
		rw = append(rw, cfg.StageLower)
	}
	c := landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS, Scoped: landlock.V11.Scoped}.BestEffort()
	err = c.Restrict(
		landlock.RODirs("/"),
		landlock.RWDirs(rw...).WithRefer().WithResolveUnix().IgnoreIfMissing(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom").WithIoctlDev().IgnoreIfMissing(),
	)
	if err != nil {
		return Mechanism{"landlock", StateFailed, err.Error()}
	}
	return Mechanism{"landlock", StateApplied, fmt.Sprintf("ABI %d: writes only to %d roots; signal and abstract-socket scopes", abi, len(rw))}
}
