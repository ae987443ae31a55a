//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// linuxBackend runs the command in a re-executed child of this binary that
// sets up namespaces, a private root, Landlock and seccomp (init_linux.go,
// rootfs_linux.go).
type linuxBackend struct{}

func (linuxBackend) name() string { return BackendLinux }

func (b linuxBackend) run(ctx context.Context, s *Spec) (*Outcome, error) {
	cfg := &initConfig{
		Argv: s.Argv, Dir: s.Dir, Writable: s.Writable, Network: s.Network,
		Masked: maskTargets(append(append(maskedFor(s), etcSecrets...), ownStateDirs()...)), Limits: s.Limits,
		Env: BuildEnv(parentEnv(), privateHome, s.Env),
	}
	cfg.ReadView, cfg.ViewLinks = readViewRoots(s) // readview.go
	if s.Stage != nil {
		cfg.StageLower, cfg.StageUpper = s.Stage.lower, s.Stage.upper
	}
	cfg.Scratch = s.Scratch
	return b.spawn(ctx, cfg, s)
}

// spawn starts the init child, feeds it cfg and collects the outcome.
func (linuxBackend) spawn(ctx context.Context, cfg *initConfig, s *Spec) (*Outcome, error) {
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
	flags := unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP
	if !cfg.Network {
		flags |= unix.CLONE_NEWNET
	}
	cmd := initCommand(uintptr(flags))
	cmd.Env = []string{} // the init child's own environment stays empty
	cmd.ExtraFiles = []*os.File{cfgR, stW}
	cmd.Stdin = s.Stdin
	cmd.WaitDelay = 5 * time.Second // a stuck stdin reader must not hang the run
	killed := make(chan struct{}, 1)
	kill := func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
	outW, errW, outHit := newCapPair(cfg.Limits.Output, s.Stdout, s.Stderr, func() {
		select {
		case killed <- struct{}{}:
		default:
		}
	})
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start init child: %w", ErrSetup, err)
	}
	cfgR.Close()
	stW.Close()
	if cg != nil {
		if err := cg.join(cmd.Process.Pid); err != nil {
			kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("%w: join cgroup: %w", ErrSetup, err)
		}
	}
	if err := json.NewEncoder(cfgW).Encode(cfg); err != nil {
		kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: send config: %w", ErrSetup, err)
	}
	cfgW.Close()

	// Wall and output caps: kill the init child; the kernel then kills
	// every process of its PID namespace.
	done := make(chan struct{})
	capped := make(chan string, 1)
	go func() { // ends when the run ends (done) or a cap fires
		select {
		case <-done:
		case <-killed:
			capped <- CapOutput
			kill()
		case <-runCtx.Done():
			if ctx.Err() == nil {
				capped <- CapWall
			}
			kill()
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

	out := &Outcome{Backend: BackendLinux, Duration: time.Since(start), Truncated: outHit()}
	out.Mechanisms = append(out.Mechanisms, cgMechs...)
	var final *initStatus
	for i := range statuses {
		st := &statuses[i]
		if st.Error != "" {
			return nil, fmt.Errorf("%w: %s", ErrSetup, st.Error)
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
	case len(out.Mechanisms) == len(cgMechs) && out.CapHit == "" && ctx.Err() == nil:
		// Init died before reporting anything: setup never completed.
		return nil, fmt.Errorf("%w: init child: %v", ErrSetup, waitErr)
	default:
		out.Signal, out.ExitCode = "SIGKILL", 137
	}
	if out.CapHit == "" {
		out.CapHit = cg.capHit()
		if out.CapHit == CapMemory && out.ExitCode == 0 {
			out.CapHit = "" // the cap was touched but the command survived it
		}
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("sandbox run: %w", err)
	}
	return out, nil
}

// maskedFor adds /run, where host daemons keep their unix sockets, and
// every other listening pathname socket of the host to the masked paths of
// a run without network: a network namespace does not isolate pathname
// sockets, and Landlock restricts them only from ABI 9.
func maskedFor(s *Spec) []string {
	if s.Network {
		return s.Masked
	}
	return append(append([]string{"/run"}, hostUnixSockets()...), s.Masked...)
}

// probe spawns the full setup without running a command.
func (b linuxBackend) probe(ctx context.Context) ([]Mechanism, error) {
	cfg := &initConfig{
		Argv: []string{"true"}, Dir: "/", Probe: true,
		Masked: maskTargets([]string{"/run"}), Limits: probeLimits,
		Env: BuildEnv(nil, privateHome, nil),
	}
	return probeOutcome(b.spawn(ctx, cfg, &Spec{}))
}
