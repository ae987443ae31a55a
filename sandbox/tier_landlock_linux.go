package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// landlockArg is the landlock tier's runner stage: a child subreaper that
// starts the exec stage and, when the command ends, kills every process it
// left behind.
const landlockArg = stagePrefix + "landlock"

// landlockBackend is the tier for machines where user namespaces are
// unavailable (Ubuntu's AppArmor restriction, container runtimes, CI
// runners). It needs no privilege and no namespace: Landlock gives the
// read view and the writable roots and refuses TCP, seccomp refuses the
// other sockets and the dangerous calls, Landlock scopes keep signals and
// abstract sockets inside, and a subreaper runner kills every descendant
// at the end. What it cannot do without namespaces it says in the
// mechanisms: host processes stay visible in /proc (not readable or
// signalable), and a Stage is a private copy rather than an overlay.
type landlockBackend struct{}

func (landlockBackend) name() string { return BackendLandlock }

func (b landlockBackend) probe(ctx context.Context) ([]Mechanism, error) {
	return probeByRunning(ctx, b)
}

func (b landlockBackend) run(ctx context.Context, s *Spec) (*Outcome, error) {
	if landlockABI() < 1 {
		return nil, fmt.Errorf("%w: kernel has no Landlock (Linux 5.13+ with landlock in the lsm= boot list)", ErrSetup)
	}
	tmp, err := os.MkdirTemp("", "ioh-landlock-")
	if err != nil {
		return nil, fmt.Errorf("%w: private directory: %w", ErrSetup, err)
	}
	defer os.RemoveAll(tmp)
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		return nil, fmt.Errorf("%w: private directory: %w", ErrSetup, err)
	}
	home, tmpdir := filepath.Join(tmp, "home"), filepath.Join(tmp, "tmp")
	for _, d := range []string{home, tmpdir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("%w: private directory: %w", ErrSetup, err)
		}
	}
	var mechs []Mechanism
	dir, writable := s.Dir, append([]string{}, s.Writable...)
	if s.Stage != nil {
		// No mount namespace, so no overlay: the view is a private copy.
		view := filepath.Join(tmp, "view")
		if err := s.Stage.materialize(view); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		rel, err := filepath.Rel(s.Stage.lower, s.Dir)
		if err != nil || !within(s.Dir, s.Stage.lower) {
			rel = "."
		}
		dir = filepath.Join(view, rel)
		writable = append(writable, view)
		mechs = append(mechs, Mechanism{"copy-stage", StateApplied, "staged view copied to a private directory (cloned where the filesystem can); no overlay without a mount namespace"})
	}
	view, deny, masked := landlockView(&Spec{Dir: dir, Writable: writable, Stage: s.Stage, Env: s.Env, Readable: s.Readable, Masked: s.Masked})
	// The protected directories of the caller's writable roots (.git …)
	// stay read-only, as in the linux tier: Landlock only grants, so a
	// root holding one is writable in its other entries only. Those that
	// do not exist yet are removed after the run if the command made them.
	present, absent := landlockProtected(s.Writable)
	cfg := &initConfig{
		Tier: BackendLandlock, Argv: s.Argv, Dir: dir, Network: s.Network, Limits: s.Limits,
		Writable: append(carve(writable, append(append([]string{}, deny...), present...)), tmp),
		ReadView: view,
		Env: append(BuildEnv(parentEnv(), home, s.Env),
			"TMPDIR="+tmpdir, "TMP="+tmpdir, "TEMP="+tmpdir),
	}
	mechs = append(mechs,
		Mechanism{"read-view", StateApplied, fmt.Sprintf("%d paths readable: system directories, workspace, writable roots, toolchains; every home's other contents and %d secrets absent", len(view), masked)},
		Mechanism{"private-tmp", StateApplied, "TMPDIR and HOME in a private directory removed after the run; /tmp itself not writable"},
		Mechanism{"pid-namespace", StateUnavailable, "no namespaces in this tier: host processes are visible in /proc (Landlock and seccomp refuse reading, signalling and tracing them)"},
	)
	out, err := b.spawn(ctx, cfg, s, mechs)
	if out != nil {
		if m := sweepProtected(absent); m != nil {
			out.Mechanisms = append(out.Mechanisms, *m)
		}
	}
	return out, err
}

// landlockProtected splits what protectedIn lists for the writable roots
// into what exists now (kept read-only) and what does not (swept after
// the run if the command creates it).
func landlockProtected(writable []string) (present, absent []string) {
	for _, w := range writable {
		for _, p := range protectedIn(w, writable, readSmall) {
			if _, err := os.Lstat(p); err == nil {
				present = append(present, p)
			} else {
				absent = append(absent, p)
			}
		}
	}
	return present, absent
}

// spawn starts the runner stage, feeds it cfg and collects the outcome.
func (landlockBackend) spawn(ctx context.Context, cfg *initConfig, s *Spec, mechs []Mechanism) (*Outcome, error) {
	start := time.Now()
	cfg.HostUID = os.Getuid()
	cg, cgMechs := newCgroup(cfg.Limits)
	defer cg.remove()
	cfg.CgroupMemory, cfg.CgroupPids = cg.memoryApplied(), cg.pidsApplied()
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: pipe: %w", ErrSetup, err)
	}
	defer cfgR.Close()
	defer cfgW.Close()
	stR, stW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: pipe: %w", ErrSetup, err)
	}
	defer stR.Close()
	defer stW.Close()
	runCtx, cancel := context.WithTimeout(ctx, cfg.Limits.Wall)
	defer cancel()

	cmd := stageCommand(landlockArg)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{cfgR, stW}
	cmd.Stdin = s.Stdin
	// SIGTERM, not SIGKILL, when the caller dies: the runner then kills
	// the command's whole tree before it exits.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.WaitDelay = 5 * time.Second
	overflow := make(chan struct{}, 1)
	outW, errW, outHit := newCapPair(cfg.Limits.Output, s.Stdout, s.Stderr, func() {
		select {
		case overflow <- struct{}{}:
		default:
		}
	})
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start runner: %w", ErrSetup, err)
	}
	cfgR.Close()
	stW.Close()
	// stop asks the runner to kill the tree and exit; SIGKILL if it has
	// not after a grace period.
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		t := time.AfterFunc(3*time.Second, func() { _ = cmd.Process.Kill() })
		_ = t // fires only if the runner is stuck; harmless after it exited
	}
	if cg != nil {
		if err := cg.join(cmd.Process.Pid); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("%w: join cgroup: %w", ErrSetup, err)
		}
	}
	if err := json.NewEncoder(cfgW).Encode(cfg); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: send config: %w", ErrSetup, err)
	}
	cfgW.Close()
	done := make(chan struct{})
	capped := make(chan string, 1)
	go func() { // ends when the run ends (done) or a cap fires
		select {
		case <-done:
		case <-overflow:
			capped <- CapOutput
			stop()
		case <-runCtx.Done():
			if ctx.Err() == nil {
				capped <- CapWall
			}
			stop()
		}
	}()
	var statuses []initStatus
	sc := bufio.NewScanner(stR)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var st initStatus
		if json.Unmarshal(sc.Bytes(), &st) == nil {
			statuses = append(statuses, st)
		}
	}
	waitErr := cmd.Wait()
	close(done)

	out := &Outcome{Backend: BackendLandlock, Duration: time.Since(start), Truncated: outHit()}
	out.Mechanisms = append(append(out.Mechanisms, mechs...), cgMechs...)
	var final *initStatus
	reported := false
	for i := range statuses {
		st := &statuses[i]
		if st.Error != "" {
			return nil, fmt.Errorf("%w: %s", ErrSetup, st.Error)
		}
		if len(st.Mechanisms) > 0 {
			reported = true
		}
		out.Mechanisms = append(out.Mechanisms, st.Mechanisms...)
		if st.Done {
			final = st
		}
	}
	select {
	case c := <-capped:
		out.CapHit = c
	default:
	}
	switch {
	case final != nil:
		out.ExitCode = final.Exit
		if final.Signal != 0 {
			sig := unix.Signal(final.Signal)
			out.Signal = unix.SignalName(sig)
			out.ExitCode = 128 + final.Signal
			if cpuCapped(sig, time.Duration(final.CPU), cfg.Limits.CPU) {
				out.CapHit = CapCPU
			}
		}
	case !reported && out.CapHit == "" && ctx.Err() == nil:
		return nil, fmt.Errorf("%w: runner: %v", ErrSetup, waitErr)
	default:
		out.Signal, out.ExitCode = "SIGKILL", 137
	}
	if out.CapHit == "" {
		out.CapHit = cg.capHit()
		if out.CapHit == CapMemory && out.ExitCode == 0 {
			out.CapHit = ""
		}
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("sandbox run: %w", err)
	}
	return out, nil
}

// landlockMain is the runner stage. It becomes a child subreaper, starts
// the command in a session of its own (forked from one restricted thread,
// or through the exec stage when address-space or process rlimits must
// bind it), reaps until the command exits, then kills every descendant
// left (daemons, setsid and double-fork escapes all end up as its
// children) and reports. A SIGTERM from the caller, or the caller's death,
// does the same at once.
func landlockMain() int {
	_ = unix.CloseRange(5, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	cfg, stF, report, fail, err := stageStart()
	if err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("child subreaper: %w", err))
	}
	term := make(chan os.Signal, 1)
	notifyTerm(term)
	if os.Getppid() == 1 { // the caller died before the death signal was armed
		return fail(errors.New("caller gone"))
	}
	report(initStatus{Mechanisms: []Mechanism{{"subreaper", StateApplied, "every descendant is killed when the command ends"}}})

	var pid int
	if needsExecStage(&cfg) {
		// The address-space and process rlimits are process-wide: they
		// would bind this runner too, so the command gets a stage of its
		// own to take them.
		pid, err = startExecStage(&cfg, stF)
	} else {
		var done *initStatus
		pid, done, err = startRestricted(&cfg, report)
		if err == nil && done != nil {
			report(*done)
			return done.Exit
		}
	}
	if err != nil {
		killDescendants()
		return fail(err)
	}
	exited := make(chan initStatus, 1)
	go func() { exited <- reapUntil(pid) }() // ends when the command exits
	select {
	case st := <-exited:
		killDescendants()
		report(st)
		return st.Exit
	case <-term:
		killDescendants()
		report(initStatus{Done: true, Signal: int(unix.SIGKILL)})
		return 137
	}
}
