package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/seccomp"
)

// The parts of restricting the runner thread that do not depend on the
// run are done before its config is read, so a runner started ahead of
// its run has them done: no_new_privs, the seccomp deny-list, and the
// ambient and bounding capability sets emptied. All three are per thread
// and bind only the runner thread, which is restricted in full before it
// forks the command and forks nothing else (a run that needs the exec
// stage has it started from the runner's main thread, which none of this
// binds). The deny-list is loaded with the tier's System V IPC rule and
// without its network rule: the socket filter, loaded in every run of
// the tier, refuses those sockets when the run has no network (and,
// below Landlock ABI 9, AF_UNIX sockets with the network too). The runner thread loads the socket
// filter early too when its hint (tier_landlock_hint_linux.go) says its
// run will have no network, as runs mostly repeat the last one's choice;
// a run that asks for network after all gets the exec stage, started
// from the main thread, instead of that thread.

// earlyRestrictions is what the runner thread applied to itself before
// its config.
type earlyRestrictions struct {
	seccomp  Mechanism
	socket   *Mechanism // the socket filter, if loaded early
	err      error      // no_new_privs or the deny-list failed: the run fails with it
	boundErr error      // emptying the ambient and bounding sets, judged with the run (capsDropped)
}

// early is the runner thread's early restrictions (runnerThread); only
// that thread touches it.
var early *earlyRestrictions

// restrictEarly applies the early restrictions to the calling thread:
// the linux tier's (its PID 1's fork thread, pid1_fork_linux.go), whose
// IPC namespace is its own.
func restrictEarly() *earlyRestrictions { return restrictEarlyWith(seccomp.Options{}, false) }

// restrictEarlyFor is the landlock runner's restrictEarly: the deny-list
// refuses System V IPC (no IPC namespace); noNet loads the socket filter
// too.
func restrictEarlyFor(noNet bool) *earlyRestrictions {
	return restrictEarlyWith(seccomp.Options{DenySysVIPC: true}, noNet)
}

// restrictEarlyWith applies no_new_privs, the deny-list with o, with
// noNet the socket filter, and the bounding-set drop.
func restrictEarlyWith(o seccomp.Options, noNet bool) *earlyRestrictions {
	e := &earlyRestrictions{}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		e.err = fmt.Errorf("no_new_privs: %w", err)
		return e
	}
	if e.seccomp, e.err = applySeccomp(o); e.err != nil {
		return e
	}
	if noNet {
		m, err := applySocketFilter(netNone)
		if err != nil {
			e.err = err
			return e
		}
		e.socket = &m
	}
	e.boundErr = dropBounding()
	return e
}

// refusesSockets reports whether the thread loaded the socket filter
// before its run: it cannot serve a run that asks for network.
func (e *earlyRestrictions) refusesSockets() bool {
	return e != nil && e.socket != nil
}

// restrictRest is the last part of restricting the runner thread, after
// Landlock: the seccomp deny-list and the socket filter (for the run's
// network choice), then an empty capability set. With the early restrictions in
// place only what depends on the run is left.
func restrictRest(cfg *initConfig) ([]Mechanism, error) {
	e := early
	early = nil
	if e == nil {
		return filterAndDropCaps(cfg) // exec_linux.go
	}
	if e.err != nil {
		return nil, e.err
	}
	mechs := []Mechanism{e.seccomp}
	switch {
	case netModeOf(cfg) != netNone && e.socket != nil:
		// runnerThread gives such a run to the exec stage.
		return nil, errors.New("the runner thread refuses sockets, and the run asks for network")
	case e.socket != nil:
		m := *e.socket
		m.Detail += "; loaded before the run, on its hint"
		mechs = append(mechs, m)
	default: // with the network too: it refuses AF_UNIX below ABI 9
		m, err := applySocketFilter(netModeOf(cfg))
		if err != nil {
			return nil, err
		}
		mechs = append(mechs, m)
	}
	cm, err := e.dropCaps(cfg)
	if err != nil {
		return nil, err
	}
	return append(mechs, cm), nil
}

// dropCaps empties the thread's capability sets after the early
// bounding-set drop (or with its error), as capsDropped judges it.
func (e *earlyRestrictions) dropCaps(cfg *initConfig) (Mechanism, error) {
	err := e.boundErr
	if err == nil {
		err = capsetEmpty()
	}
	cm, err := capsDropped(cfg, err) // landlock_linux.go
	if err != nil {
		return Mechanism{}, fmt.Errorf("drop capabilities: %w", err)
	}
	return cm, nil
}

// dropBounding empties the calling thread's ambient and bounding
// capability sets: dropCaps (exec_linux.go) without its final capset.
func dropBounding() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return err
		}
	}
	return nil
}

// capsetEmpty empties the calling thread's effective, permitted and
// inheritable sets.
func capsetEmpty() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}
