package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/reaper"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/seccomp"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
)

// runExecStage starts the exec stage (a second re-exec of this binary,
// inside the private root) and reaps processes until it exits. The exec
// stage, not PID 1, takes the rlimits, drops capabilities and loads
// Landlock and seccomp, so they bind the command alone. A run that needs
// no exec stage is handed to the fork thread (pid1_fork_linux.go). The
// host tree is still attached below the private root: detach removes it
// (the root's last step), before anything is reported or started.
func runExecStage(cfg *initConfig, mechs []Mechanism, report func(initStatus), ft *forkThread, detach func() error) int {
	if !needsExecStage(cfg) {
		code, err := ft.runOnForkThread(func(ft *forkThread) int { return runDirect(cfg, mechs, report, ft) }, detach)
		if err != nil {
			report(initStatus{Error: err.Error()})
			return 125
		}
		return code
	}
	dropPID1Rules() // the exec stage builds its own
	if err := detach(); err != nil {
		report(initStatus{Error: err.Error()})
		return 125
	}
	report(initStatus{Mechanisms: mechs})
	absent := absentProtected(cfg.Writable, cfg.Protected)
	if err := stagecfg.AwaitGo(); err != nil {
		report(initStatus{Error: err.Error()})
		return 125
	}
	r, w, err := os.Pipe()
	if err != nil {
		report(initStatus{Error: "exec stage pipe: " + err.Error()})
		return 125
	}
	cmd := exec.Command("/proc/self/exe", execArg)
	cmd.Env = stageEnv()
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r, os.NewFile(4, "status")}
	// Its own session: no controlling terminal to inject keystrokes into.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		report(initStatus{Error: "start exec stage: " + err.Error()})
		return 125
	}
	r.Close()
	if err := json.NewEncoder(w).Encode(cfg); err != nil {
		report(initStatus{Error: "send exec config: " + err.Error()})
		return 125
	}
	w.Close()
	return reap(cmd.Process.Pid, absent, report)
}

// runDirect runs on PID 1's fork thread: it completes the thread's
// restrictions, joins the run's cgroups and looks the command up while the
// main thread detaches the host tree, then forks the command from this
// thread, and reaps. Nothing is reported or started before the host tree
// is gone.
func runDirect(cfg *initConfig, mechs []Mechanism, report func(initStatus), ft *forkThread) int {
	more, err := ft.restrictForkThread(cfg)
	if err == nil {
		err = ft.joinRun() // pid1_fork_linux.go; mostly done early
	}
	var absent []string
	var path string
	var lookErr, dirErr error
	if err == nil {
		absent = absentProtected(cfg.Writable, cfg.Protected)
		path, lookErr = lookPath(cfg.Argv[0], cfg.Env)
		// exec would report a failed chdir as "fork/exec ARGV0: ...",
		// which names the wrong thing. (PID 1 entering it is harmless.)
		dirErr = unix.Chdir(cfg.Dir)
	}
	if derr := ft.awaitDetached(); err == nil {
		err = derr
	}
	if err != nil {
		report(initStatus{Error: err.Error()})
		return 125
	}
	// What was applied is reported once the command runs (its start
	// does not wait for the report), or before the run's end when it
	// does not start.
	applied := initStatus{Mechanisms: append(mechs, more...)}
	end := func(st initStatus) { report(applied); report(st) }
	switch {
	case cfg.Probe:
		end(initStatus{Done: true})
		return 0
	case lookErr != nil:
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: %s: %v\n", cfg.Argv[0], lookErr)
		end(initStatus{Done: true, Exit: 127})
		return 127
	case dirErr != nil:
		// A setup failure (125), as the exec stage's chdir reports it.
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: %s\n", workdirError(cfg, dirErr)) // workdir_explain_linux.go
		end(initStatus{Done: true, Exit: 125})
		return 125
	}
	pid, err := startCommand(path, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: exec %s: %v\n", path, err)
		end(initStatus{Done: true, Exit: 126})
		return 126
	}
	report(applied)
	return reap(pid, absent, report)
}

// startCommand forks the command from the calling (locked, restricted)
// thread in a session of its own, with this process's standard streams,
// and returns its pid. It calls syscall.ForkExec, not os.StartProcess:
// the latter's first use in a process first forks a throwaway child to
// probe for pidfd support, one more process start per contained run for
// a stage that starts a single command and reaps it with wait4.
func startCommand(path string, cfg *initConfig) (int, error) {
	return syscall.ForkExec(path, cfg.Argv, &syscall.ProcAttr{
		Dir: cfg.Dir, Env: cfg.Env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
}

// reap is PID 1's loop: it reaps every orphan until the command (pid)
// exits; then it kills and reaps what is left, removes the protected
// directories the command created (absent before it ran), and reports how
// the command ended. Nothing of the run outlives that report: the caller
// returns on it, before this process has exited.
func reap(pid int, absent []string, report func(initStatus)) int {
	st := endStatus(reaper.Until(pid))
	reaper.KillRest()
	if len(absent) > 0 {
		if m := sweepProtected(absent); m != nil {
			st.Mechanisms = append(st.Mechanisms, *m)
		}
	}
	report(st)
	return st.Exit
}

// endStatus is the last status line of a command that ended so.
func endStatus(e reaper.Ended) initStatus {
	return initStatus{Done: true, Exit: e.Exit, Signal: e.Signal, CPU: int64(e.CPU)}
}

// execMain is the exec stage: it runs as the command's own process, so
// everything set here is inherited by the command and nothing else.
func execMain() int {
	cfgF := os.NewFile(3, "config")
	stF := os.NewFile(4, "status")
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	fail := func(err error) int {
		b, _ := json.Marshal(initStatus{Error: err.Error()})
		_, _ = stF.Write(append(b, '\n'))
		return 125
	}
	var cfg initConfig
	if err := json.NewDecoder(cfgF).Decode(&cfg); err != nil {
		return fail(fmt.Errorf("exec stage config: %w", err))
	}
	cfgF.Close()
	if err := unix.Chdir(cfg.Dir); err != nil {
		return fail(errors.New(workdirError(&cfg, err)))
	}
	mechs, err := restrictSelf(&cfg)
	if err != nil {
		return fail(err)
	}
	b, _ := json.Marshal(initStatus{Mechanisms: mechs})
	_, _ = stF.Write(append(b, '\n'))
	stF.Close()
	if cfg.Probe {
		return 0
	}
	path, err := lookPath(cfg.Argv[0], cfg.Env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: %s: %v\n", cfg.Argv[0], err)
		return 127
	}
	if err := memLimit(&cfg); err != nil {
		fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: memory rlimit: %v\n", err)
		return 125
	}
	err = unix.Exec(path, cfg.Argv, cfg.Env)
	fmt.Fprintf(os.Stderr, "ioh-lsp sandbox: exec %s: %v\n", path, err)
	return 126
}

// restrictSelf applies to the exec stage's thread, which then execs the
// command: every rlimit, no_new_privs, Landlock, seccomp, and an empty
// capability set. (PID 1's fork thread applies the same in two parts:
// pid1_fork_linux.go.)
func restrictSelf(cfg *initConfig) ([]Mechanism, error) {
	// The memory rlimit waits until just before exec (memLimit): a Go
	// process may already use more than a small cap, and its next thread
	// or heap arena would fail. The rlimits mechanism names it all the
	// same: it is what binds the command.
	c := *cfg
	c.CgroupMemory = true
	mechs := applyRlimits(&c)
	if cfg.Limits.Memory > 0 && !cfg.CgroupMemory && mechs[0].State == StateApplied {
		mechs[0].Detail += " " + memoryRlimitsDetail(cfg.Limits.Memory) // rlimit_unix.go
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("no_new_privs: %w", err)
	}
	mechs = append(mechs, Mechanism{"no-new-privs", StateApplied, ""})
	lm, err := applyLandlock(cfg)
	if err != nil {
		return nil, err
	}
	mechs = append(mechs, lm...)
	fm, err := filterAndDropCaps(cfg)
	if err != nil {
		return nil, err
	}
	mechs = append(mechs, fm...)
	if cfg.Tier == BackendLandlock {
		mm, err := metaHandOff(proxyPortOf(cfg)) // tier_landlock_meta_linux.go
		if err != nil {
			return nil, err
		}
		mechs = append(mechs, mm)
	}
	return mechs, nil
}

// filterAndDropCaps is the last part of restricting the thread that will
// exec the command, shared by both tiers: the seccomp deny-list, then an
// empty capability set. The landlock tier, which has no network or IPC
// namespace, gets the deny-list's System V IPC and (without any network)
// network rules, and its socket filter for the run's network.
func filterAndDropCaps(cfg *initConfig) ([]Mechanism, error) {
	ll := cfg.Tier == BackendLandlock
	mode := netModeOf(cfg) // netproxy.go
	m, err := applySeccomp(seccomp.Options{DenyNetwork: ll && mode == netNone, DenySysVIPC: ll})
	if err != nil {
		return nil, err
	}
	mechs := []Mechanism{m}
	if ll {
		m, err := applySocketFilter(mode) // socketfilter_linux.go
		if err != nil {
			return nil, err
		}
		mechs = append(mechs, m)
	}
	cm, err := dropCapsFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("drop capabilities: %w", err)
	}
	return append(mechs, cm), nil
}

// needsExecStage: the address-space and process rlimits must not bind
// PID 1 (its runtime would fail), so when no cgroup carries those caps the
// command gets a stage of its own to take them. Otherwise PID 1 restricts
// itself and forks the command directly, saving a process start.
func needsExecStage(cfg *initConfig) bool {
	return (cfg.Limits.Memory > 0 && !cfg.CgroupMemory) || (cfg.Limits.Procs > 0 && !cfg.CgroupPids)
}

// dropCaps empties the bounding, ambient, inheritable, permitted and
// effective sets, so the command (uid 0 in the user namespace) has no
// capability even there.
func dropCaps() error {
	if err := dropBounding(); err != nil { // tier_landlock_early_linux.go
		return err
	}
	return capsetEmpty()
}

// memLimit sets the memory rlimits (memoryRlimits: data, the
// address-space backstop and file size) of the exec stage right before it
// execs the command, when no cgroup carries the memory cap.
func memLimit(cfg *initConfig) error {
	if cfg.Limits.Memory <= 0 || cfg.CgroupMemory {
		return nil
	}
	for _, r := range memoryRlimits(cfg.Limits.Memory) { // rlimit_unix.go
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: r.v, Max: r.v}); err != nil {
			return fmt.Errorf("%s rlimit: %w", r.name, err)
		}
	}
	return nil
}
