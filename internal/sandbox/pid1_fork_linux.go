package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
)

// PID 1 of the linux tier forks the command from a thread of its own,
// the fork thread, which it starts before anything else and which
// applies to itself, before the run's config exists, what does not
// depend on the run: no_new_privs, the seccomp deny-list (the linux tier
// has no socket filter: its network namespace does that work) and the
// bounding and ambient capability sets emptied (restrictEarly,
// tier_landlock_early_linux.go). A stage started ahead of its run (a
// warm stage) thus has them done when its run comes.
//
// Each of them is per thread and binds only the fork thread: PID 1's main
// thread keeps its capabilities and may still mount, since it builds the
// private root after the config (setupRoot). When the config has come,
// the fork thread joins the run's cgroups (joinEarly) while the main
// thread builds the root; once the root is built, the main thread hands
// the rest of the run to the fork thread (runOnForkThread) and detaches
// the host tree meanwhile. The fork thread applies what depends on the
// run (the rlimits that cannot hurt PID 1, the Landlock ruleset the main
// thread built, pid1_landlock_linux.go, an empty capability set), waits
// for the detach, forks the command, which inherits all of it, and reaps.
// The exec stage, where the run needs one, is still started from the main
// thread, which none of the early restrictions bind: it restricts itself
// in full.
//
// The Go runtime never creates a thread by cloning a locked one (it hands
// the clone to its template thread), so no thread of the runtime inherits
// the fork thread's restrictions by accident; and the fork thread runs
// only its own goroutine.

// forkThread is PID 1's locked thread for the command's fork.
type forkThread struct {
	// wake: a pipe on which the main thread writes one byte when the
	// run's config has come (joinEarly), one when the thread's job is
	// posted and one when the host tree is detached; the thread sleeps
	// in read(2) on it. Not a Go channel: a goroutine locked to a
	// sleeping thread is woken through another of the runtime's threads
	// (two wake-ups, about 0.1 ms in a virtual machine); a read is woken
	// by the kernel directly.
	wake    [2]int
	wakeErr error
	job     atomic.Pointer[func()]
	// joinPosted: the run's config has come and the command will be
	// forked from this thread, which may join the run's cgroups now.
	joinPosted atomic.Bool
	// joined and joinErr: the thread joined the run's cgroups (stagecfg.AwaitGo)
	// while the main thread built the root; written and read on the
	// thread only.
	joined  bool
	joinErr error
	// detached is the result of detaching the host tree (the last step
	// of the root's build), which the command's fork waits for.
	detached atomic.Pointer[error]
	// early is what the thread applied to itself before its job;
	// written and read on the thread only.
	early *earlyRestrictions
}

// startForkThread starts the fork thread, which applies its early
// restrictions at once and then waits for its job.
func startForkThread() *forkThread {
	ft := &forkThread{}
	if ft.wakeErr = unix.Pipe2(ft.wake[:], unix.O_CLOEXEC); ft.wakeErr != nil {
		return ft
	}
	go ft.loop() // ends with the process
	return ft
}

func (ft *forkThread) loop() {
	runtime.LockOSThread() // never unlocked: the thread is restricted
	ft.early = restrictEarly()
	for ft.await() == nil {
		if job := ft.job.Load(); job != nil {
			(*job)()
			return
		}
		if ft.joinPosted.Load() && !ft.joined {
			ft.joinErr, ft.joined = stagecfg.AwaitGo(), true // internal/stagecfg
		}
	}
}

// joinEarly tells the fork thread that the run's config has come and
// that the command will be forked from it: it joins the run's cgroups
// (the caller's "go", then the v1 "tasks" writes) while this thread
// builds the root.
func (ft *forkThread) joinEarly() {
	if ft.wakeErr == nil {
		ft.joinPosted.Store(true)
		_ = ft.signal() // on failure the job joins them itself
	}
}

// joinRun joins the run's cgroups from the fork thread, unless it did so
// early (joinEarly), and returns how that went.
func (ft *forkThread) joinRun() error {
	if ft.joined {
		return ft.joinErr
	}
	ft.joined = true
	ft.joinErr = stagecfg.AwaitGo()
	return ft.joinErr
}

// await sleeps until the main thread's next byte.
func (ft *forkThread) await() error {
	var b [1]byte
	for {
		n, err := unix.Read(ft.wake[0], b[:])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return fmt.Errorf("fork thread: %w", err)
		case n != 1:
			return errors.New("fork thread: wake pipe closed")
		}
		return nil
	}
}

func (ft *forkThread) signal() error {
	_, err := unix.Write(ft.wake[1], []byte{1})
	return err
}

// runOnForkThread posts f to the fork thread, then detaches the host
// tree (detach) while the thread restricts itself, and returns f's
// result. f must call awaitDetached before it reports or starts
// anything. An error means f may not have run to its end.
func (ft *forkThread) runOnForkThread(f func(*forkThread) int, detach func() error) (int, error) {
	if ft.wakeErr != nil {
		return 0, fmt.Errorf("fork thread: %w", ft.wakeErr)
	}
	done := make(chan int, 1)
	job := func() { done <- f(ft) }
	ft.job.Store(&job)
	if err := ft.signal(); err != nil {
		return 0, fmt.Errorf("fork thread: %w", err)
	}
	err := detach()
	ft.detached.Store(&err)
	if err := ft.signal(); err != nil {
		return 0, fmt.Errorf("fork thread: %w", err)
	}
	return <-done, nil
}

// awaitDetached waits, on the fork thread, until the main thread has
// detached the host tree, and returns how that went.
func (ft *forkThread) awaitDetached() error {
	for {
		if p := ft.detached.Load(); p != nil {
			return *p
		}
		// A byte read here may be an earlier one the job's start
		// overtook (joinEarly's): the loop reads on.
		if err := ft.await(); err != nil {
			return err
		}
	}
}

// restrictForkThread completes the fork thread's restrictions with what
// depends on the run, in the order restrictSelf applies them: the rlimits
// that cannot hurt PID 1 (core, open files, CPU; never address space or
// processes, which take the exec stage), Landlock, and the empty
// capability set last. Any early restriction that failed fails the run
// here.
func (ft *forkThread) restrictForkThread(cfg *initConfig) ([]Mechanism, error) {
	e := ft.early
	if e == nil {
		return nil, fmt.Errorf("fork thread: not restricted")
	}
	if e.err != nil {
		return nil, e.err
	}
	c := *cfg
	c.CgroupMemory, c.CgroupPids = true, true // DATA and NPROC would bind PID 1
	mechs := applyRlimits(&c)
	mechs = append(mechs, Mechanism{"no-new-privs", StateApplied, ""})
	mechs = append(mechs, enforcePID1Rules()) // pid1_landlock_linux.go
	mechs = append(mechs, e.seccomp)
	cm, err := e.dropCaps(cfg)
	if err != nil {
		return nil, err
	}
	return append(mechs, cm), nil
}
