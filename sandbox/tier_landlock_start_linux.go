package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

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
	if err := awaitGo(); err != nil {
		return 0, err
	}
	cmd := exec.Command("/proc/self/exe", execArg)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r, status}
	// Its own session: no controlling terminal to inject keystrokes into.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		return 0, fmt.Errorf("start exec stage: %w", err)
	}
	if err := json.NewEncoder(w).Encode(cfg); err != nil {
		return 0, fmt.Errorf("send exec config: %w", err)
	}
	return cmd.Process.Pid, nil
}

// startRestricted restricts one locked OS thread of the runner and forks
// the command from it, saving the exec stage's process start: the child
// inherits the thread's Landlock domain, seccomp filters, no_new_privs and
// empty capability sets; the runner's other threads, its main one
// included, stay outside the domain, so the command cannot signal or
// trace the runner that will kill it. The thread is never unlocked: it
// ends with its goroutine. A non-nil status means the command did not
// start (a probe, or a command that cannot be found or entered).
func startRestricted(cfg *initConfig, report func(initStatus)) (int, *initStatus, error) {
	type started struct {
		pid  int
		done *initStatus
		err  error
	}
	ch := make(chan started, 1)
	go func() { // ends once the command is started or refused
		runtime.LockOSThread() // never unlocked: the thread is restricted
		pid, done, err := forkRestricted(cfg, report)
		ch <- started{pid, done, err}
	}()
	s := <-ch
	return s.pid, s.done, s.err
}

func forkRestricted(cfg *initConfig, report func(initStatus)) (int, *initStatus, error) {
	mechs, err := restrictThread(cfg)
	if err != nil {
		return 0, nil, err
	}
	report(initStatus{Mechanisms: mechs})
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
	if err := awaitGo(); err != nil {
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
	c := *cfg
	c.CgroupMemory, c.CgroupPids = true, true
	mechs := applyRlimits(&c)
	lm, err := restrictThreadLandlock(cfg)
	if err != nil {
		return nil, err
	}
	mechs = append(mechs, Mechanism{"no-new-privs", StateApplied, ""})
	mechs = append(mechs, lm...)
	fm, err := filterAndDropCaps(cfg, !cfg.Network)
	if err != nil {
		return nil, err
	}
	mechs = append(mechs, fm...)
	mechs = append(mechs, Mechanism{"runner-outside", StateApplied, "restrictions bind the command's thread only; the runner stays outside its domain"})
	return mechs, nil
}
