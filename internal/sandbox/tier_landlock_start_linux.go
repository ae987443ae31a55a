package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/ruleset"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"

	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startExecStage starts the exec stage (a re-execution of this binary that
// takes every rlimit, restricts itself and execs the command) in a session
// of its own, and returns its pid, which becomes the command's.
func startExecStage(cfg *initConfig, status *os.File) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("exec stage pipe: %w", err)
	}
	defer w.Close()
	if err := stagecfg.AwaitGo(); err != nil {
		return 0, err
	}
	cmd := exec.Command("/proc/self/exe", execArg)
	cmd.Env = stageEnv()
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Its socket to this runner, over which it hands over the listener
	// of its metadata filter (tier_landlock_meta_linux.go).
	socks, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("exec stage socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(socks[0]), "metadata"), os.NewFile(uintptr(socks[1]), "metadata")
	cmd.ExtraFiles = []*os.File{r, status, theirs} // 3, 4, metaHandFd
	// Its own session: no controlling terminal to inject keystrokes into.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	theirs.Close()
	if err != nil {
		mine.Close()
		return 0, fmt.Errorf("start exec stage: %w", err)
	}
	go metaReceive(mine, cfg.Writable, proxyPortOf(cfg)) // ends when the stage has sent its listener and the command has ended, or the stage exited
	if err := json.NewEncoder(w).Encode(cfg); err != nil {
		return 0, fmt.Errorf("send exec config: %w", err)
	}
	return cmd.Process.Pid, nil
}

// The runner's phases (landlockMain): waiting for its config, claimed by
// its run, or ended by a signal before a run claimed it.
const (
	runnerWaiting int32 = iota
	runnerClaimed
	runnerEnded
)

// runnerStarted is what the runner thread hands back: how the command
// started, or why it did not, and the run's status channel.
type runnerStarted struct {
	pid    int
	done   *initStatus // the command did not start (a probe, or it cannot be found or entered)
	err    error       // setup failed
	report func(initStatus)
	fail   func(error) int
	// cfg and stF are set when the command needs the exec stage, which
	// the main thread starts (startExecStage).
	cfg *initConfig
	stF *os.File
}

// runnerThread is the runner's locked OS thread, started before the
// config exists. Before the config it applies to itself what does not
// depend on the run (restrictEarly) and builds the rules of the view
// hinted in its environment (tier_landlock_hint_linux.go); then it reads
// the config, claims the run (unless a signal has ended the runner first:
// then it starts nothing) and starts the command. Mostly it restricts
// itself and forks the command, saving the exec stage's process start:
// the child inherits the thread's Landlock domain, seccomp filters,
// no_new_privs and empty capability sets; the runner's other threads, its
// main one included, stay outside the domain, so the command cannot
// signal or trace the runner that will kill it. Where address-space or
// process rlimits must bind the command, it leaves the command to the
// exec stage, which the main thread starts. The thread is never
// unlocked: it ends with its goroutine.
func runnerThread(phase *atomic.Int32, reaperErr error, hint []string, out chan<- runnerStarted) {
	runtime.LockOSThread() // never unlocked: the thread is restricted
	_ = landlockABI()      // asked once per process
	h, hinted := parseHint(hint)
	early = restrictEarlyFor(hinted && !h.network) // tier_landlock_early_linux.go
	if hinted {
		prebuilt = prebuildRuleset(h) // tier_landlock_hint_linux.go
	}
	cfg, stF, report, fail, err := stageStart()
	s := runnerStarted{report: report, fail: fail, err: err}
	if err == nil && !phase.CompareAndSwap(runnerWaiting, runnerClaimed) {
		select {} // a signal ended the runner before its run: it is exiting
	}
	switch {
	case s.err != nil:
	case reaperErr != nil:
		s.err = fmt.Errorf("child subreaper: %w", reaperErr)
	case os.Getppid() == 1: // the caller died before the death signal was armed
		s.err = errors.New("caller gone")
	default:
		sub := Mechanism{"subreaper", StateApplied, "every descendant is killed when the command ends"}
		if needsExecStage(&cfg) || (netModeOf(&cfg) != netNone && early.refusesSockets()) {
			// The address-space and process rlimits are process-wide:
			// they would bind this runner too, so the command gets a
			// stage of its own to take them, started from the main
			// thread, which the early restrictions do not bind. So does
			// a run with network (or a proxy) when this thread loaded the socket
			// filter ahead on its hint's word.
			report(initStatus{Mechanisms: []Mechanism{sub}})
			dropPrebuilt()
			s.cfg, s.stF = &cfg, stF
		} else {
			s.pid, s.done, s.err = forkRestricted(&cfg, report, sub)
		}
	}
	out <- s
}

// forkRestricted restricts the calling thread, reports the mechanisms
// (first, the runner's own, sub) in one status line, and forks the
// command once the caller says "go".
func forkRestricted(cfg *initConfig, report func(initStatus), sub Mechanism) (int, *initStatus, error) {
	mechs, err := restrictThread(cfg)
	if err != nil {
		return 0, nil, err
	}
	report(initStatus{Mechanisms: append([]Mechanism{sub}, mechs...)})
	if cfg.Probe {
		return 0, &initStatus{Done: true}, nil
	}
	path, err := lookPath(cfg.Argv[0], cfg.Env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: %s: %v\n", cfg.Argv[0], err)
		return 0, &initStatus{Done: true, Exit: 127}, nil
	}
	if err := unix.Access(cfg.Dir, unix.X_OK); err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: working directory %s cannot be entered inside the sandbox (%v)\n", cfg.Dir, err)
		return 0, &initStatus{Done: true, Exit: 126}, nil
	}
	if err := stagecfg.AwaitGo(); err != nil {
		return 0, nil, err
	}
	pid, err := startCommand(path, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: exec %s: %v\n", path, err)
		return 0, &initStatus{Done: true, Exit: 126}, nil
	}
	return pid, nil, nil
}

// restrictThread is restrictSelf for one thread of the runner: the
// per-process rlimits that cannot hurt the runner (core, open files, CPU;
// never address space or processes, which need the exec stage), then
// no_new_privs and Landlock on this thread, the seccomp deny-list and the
// socket filter (both per thread), and an empty capability set.
func restrictThread(cfg *initConfig) ([]Mechanism, error) {
	// The ruleset first: its builder holds a descriptor per path, which
	// an open-files cap set before would limit.
	rs, lm, err := tierRuleset(cfg) // tier_landlock_rules_linux.go
	if err != nil {
		return nil, err
	}
	defer unix.Close(rs)
	c := *cfg
	c.CgroupMemory, c.CgroupPids = true, true
	mechs := applyRlimits(&c)
	if early != nil && early.err == nil {
		// no_new_privs is set on this thread already (restrictEarly).
		err = ruleset.RestrictSelf(rs)
	} else {
		err = ruleset.Enforce(rs)
	}
	if err != nil {
		return nil, err
	}
	mechs = append(mechs, Mechanism{"no-new-privs", StateApplied, ""})
	mechs = append(mechs, lm...)
	fm, err := restrictRest(cfg) // tier_landlock_early_linux.go
	if err != nil {
		return nil, err
	}
	mechs = append(mechs, fm...)
	// Last: the filters stacked before it see each call first, and a
	// deny-list EPERM wins over its notification.
	mm, err := metaSupervise(cfg.Writable, proxyPortOf(cfg)) // tier_landlock_meta_linux.go
	if err != nil {
		return nil, err
	}
	mechs = append(mechs, mm)
	mechs = append(mechs, Mechanism{"runner-outside", StateApplied, "restrictions bind the command's thread only; the runner stays outside its domain"})
	return mechs, nil
}

// quietChildExits sets SIGCHLD back to its default disposition, under
// which the kernel drops it: the runner learns of its children's exits
// from waitid alone, and the exit of the command does not also interrupt
// one of its threads to run the Go runtime's handler for a signal nobody
// asked for. Raw rt_sigaction as in pid1.DeafToCommand;
// SIG_DFL, not SIG_IGN, which would have the kernel reap the children
// itself.
func quietChildExits() {
	var dfl [4]uint64 // struct sigaction, every field zero: SIG_DFL, no flags, empty mask
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
}
