package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
)

// stageRun is what differs between the Linux tiers' supervision of their
// re-executed stage: PID 1 of the linux tier, the landlock tier's runner.
type stageRun struct {
	backend string // the Outcome's backend
	what    string // the stage, as errors name it
	// kind names the stages newCmd makes alike (tier, clone flags): a
	// warm stage serves only a run of its kind.
	kind   string
	newCmd func() *exec.Cmd // the stage, not started; startStage wires its files
	// stop ends the run when a cap (wall, output) fires.
	stop func(*exec.Cmd)
	// mechs are the caller's own mechanisms, reported before the stage's.
	mechs []Mechanism
}

// superviseStage is the caller's side of a contained run in both Linux
// tiers: it takes a warm stage or starts one, hands it cfg on fd 3 (with
// the run's cgroups, which the stage joins), reads its status lines from
// fd 4, enforces the wall and output caps, and assembles the Outcome: the
// mechanisms every side reported, how the command ended and which cap,
// if any, ended it. A warm stage that died while it waited (it reported
// nothing, so the command never started) is replaced by a cold start.
func superviseStage(ctx context.Context, cfg *initConfig, s *Spec, r stageRun) (*Outcome, error) {
	defer s.pool.prewarm(r.kind, r.newCmd) // the next run's stage, once this one is over (warm_linux.go)
	out, err := superviseOnce(ctx, cfg, s, r, true)
	if errors.Is(err, errStageSilent) && ctx.Err() == nil {
		out, err = superviseOnce(ctx, cfg, s, r, false)
	}
	if errors.Is(err, errStageSilent) {
		err = fmt.Errorf("%w: %s: %w", ErrSetup, r.what, err)
	}
	return out, err
}

// superviseOnce is one attempt of superviseStage; with warmOK it may use
// a warm stage, and then it returns errStageSilent if that stage said
// nothing.
func superviseOnce(ctx context.Context, cfg *initConfig, s *Spec, r stageRun, warmOK bool) (*Outcome, error) {
	start := time.Now()
	cfg.HostUID = os.Getuid()
	cfg.HostHome = hostHome() // env.go; the linux tier's PID 1 may put HOME there
	cg, cgMechs := newCgroup(s.pool, Limits(cfg.Limits))
	stageGone := false // the stage was reaped, or will be in the background
	defer func() {
		if !stageGone {
			cg.Remove()
			sweepBases()
		}
	}()
	cfg.CgroupMemory, cfg.CgroupPids = cg.MemoryApplied(), cg.PidsApplied()
	cfg.CgroupTasks = cg.TaskPaths()

	runCtx, cancel := context.WithTimeout(ctx, cfg.Limits.Wall)
	defer cancel()
	var st *startedStage
	var err error
	if warmOK {
		st, err = s.pool.stageFor(r.kind, r.newCmd, s.Stdin)
	} else {
		st, err = startStage(r.newCmd(), s.Stdin)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: start %s: %w", ErrSetup, r.what, err)
	}
	defer st.close()
	cmd := st.cmd
	overflow := make(chan struct{}, 1)
	outW, errW, outDone := newCapPair(cfg.Limits.Output, s.Stdout, s.Stderr, s.Stream, func() {
		select {
		case overflow <- struct{}{}:
		default:
		}
	})
	st.out.attach(outW)
	st.errw.attach(errW)
	abort := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	// The config goes first, so the stage builds its root while a v2
	// group is joined; "go" then lets it fork the command, which is born
	// in the run's groups (stagecfg.AwaitGo joins the v1 groups from
	// the forking thread).
	if err := stagecfg.Write(st.cfgW, cfg); err != nil {
		abort()
		if st.warm {
			return nil, errStageSilent
		}
		return nil, fmt.Errorf("%w: send config: %w", ErrSetup, err)
	}
	if err := cg.Join(cmd.Process.Pid); err != nil { // a v2 group only: the stage joins v1 itself
		abort()
		return nil, fmt.Errorf("%w: join cgroup: %w", ErrSetup, err)
	}
	// A stage that starts no command (a probe, a command not found) may
	// be gone already: the write then fails, and its status says why.
	_, _ = io.WriteString(st.cfgW, stagecfg.GoWord)
	st.cfgW.Close()

	done := make(chan struct{})
	capped := make(chan string, 1)
	go func() { // ends when the run ends (done) or a cap fires
		select {
		case <-done:
		case <-overflow:
			capped <- CapOutput
			r.stop(cmd)
		case <-runCtx.Done():
			if ctx.Err() == nil {
				capped <- CapWall
			}
			r.stop(cmd)
		}
	}()

	var statuses []initStatus
	sc := bufio.NewScanner(st.stR)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var st initStatus
		if json.Unmarshal(sc.Bytes(), &st) == nil {
			statuses = append(statuses, st)
		}
	}
	var waitErr error
	if len(statuses) > 0 && statuses[len(statuses)-1].Done && s.pool.active() {
		// The stage said its last word after killing the rest of the
		// run, and closed its streams: the run is over. For a long-lived
		// caller (its Pool) the stage's exit (its namespaces' teardown)
		// and the groups' removal go on in the background; a one-shot
		// caller waits, it would exit before they are done.
		st.awaitOutput(cmd.WaitDelay)
		stageGone = true
		reap := func() { // ends when the stage is reaped and its groups removed
			t := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
			_ = cmd.Wait()
			t.Stop()
			cg.Remove()
			sweepBases()
			s.pool.makeSpareCgroup(Limits(cfg.Limits)) // the next run's, mostly with the same limits
		}
		if !s.pool.background(reap) { // closed meanwhile
			reap()
		}
	} else {
		waitErr = cmd.Wait()
		st.awaitOutput(cmd.WaitDelay)
	}
	close(done)
	if st.warm && len(statuses) == 0 && ctx.Err() == nil && runCtx.Err() == nil {
		return nil, errStageSilent
	}

	out := &Outcome{Backend: r.backend, Duration: time.Since(start), Truncated: outDone()}
	out.Mechanisms = append(append(out.Mechanisms, r.mechs...), cgMechs...)
	var final *initStatus
	reported := false
	for i := range statuses {
		st := &statuses[i]
		if st.Error != "" {
			return nil, fmt.Errorf("%w: %s", ErrSetup, st.Error)
		}
		reported = reported || len(st.Mechanisms) > 0
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
		// The stage died before reporting anything: setup never completed.
		return nil, fmt.Errorf("%w: %s: %v", ErrSetup, r.what, waitErr)
	default:
		out.Signal, out.ExitCode = "SIGKILL", 137
	}
	if out.CapHit == "" {
		out.CapHit = cgroupCapHit(cg)
		if out.CapHit == CapMemory && out.ExitCode == 0 {
			out.CapHit = "" // the cap was touched but the command survived it
		}
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("sandbox run: %w", err)
	}
	return out, nil
}
