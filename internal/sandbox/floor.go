package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// floorBackend is the portable floor: its own process group killed as a
// whole, rlimits where the OS has them, a wall timeout, a scrubbed
// environment, a private HOME, and a private copy of the working directory
// unless that lies in a writable root. It confines nothing else: Outcome
// says so.
type floorBackend struct{}

func (floorBackend) name() string { return BackendFloor }

func (b floorBackend) probe(ctx context.Context) ([]Mechanism, error) {
	return probeByRunning(ctx, b)
}

func (floorBackend) run(ctx context.Context, s *Spec) (*Outcome, error) {
	return runProcess(ctx, s, BackendFloor, nil)
}

// wrapFunc lets a backend built on the floor (macOS) rewrite the command
// before it starts, returning the mechanisms it adds.
type wrapFunc func(cmd *exec.Cmd, s *Spec, tmp string) ([]Mechanism, error)

// runProcess runs s as an ordinary child process in its own group, the
// shared body of the floor, macOS and Windows backends.
func runProcess(ctx context.Context, s *Spec, backend string, wrap wrapFunc) (*Outcome, error) {
	if s.NetProxy != nil {
		return nil, refuseNetProxy(backend, processTierNet(backend))
	}
	start := time.Now()
	tmp, err := os.MkdirTemp("", "ioh-floor-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	dir, mechs, err := privateWorkdir(s, tmp)
	if err != nil {
		return nil, err
	}
	env := BuildEnv(parentEnv(), home, s.Env)
	env = append(env, "TMPDIR="+tmp, "TEMP="+tmp, "TMP="+tmp, "USERPROFILE="+home)
	env, scratchMechs := goCacheScratch(s.Scratch, env, filepath.Join(tmp, "gocache"), cacheProgram()) // scratch.go
	mechs = append(mechs, scratchMechs...)
	runCtx, cancel := context.WithTimeout(ctx, s.Limits.Wall)
	defer cancel()
	cmd, stageMechs, cleanup, err := floorCommand(s, env)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer cleanup()
	mechs = append(mechs, stageMechs...)
	mechs = append(mechs,
		Mechanism{"wall-timeout", StateApplied, s.Limits.Wall.String()},
		Mechanism{"scrubbed-env", StateApplied, "allow-listed variables, private HOME"},
	)
	if wrap != nil {
		wm, err := wrap(cmd, s, tmp)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		mechs = append(mechs, wm...)
	} else {
		mechs = append(mechs,
			Mechanism{"filesystem-confinement", StateUnavailable, "the floor backend cannot confine writes outside the working directory"},
			Mechanism{"network-isolation", StateUnavailable, "the floor backend cannot deny the network"},
		)
	}
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = s.Stdin
	kill := make(chan struct{}, 1)
	outW, errW, outDone := newCapPair(s.Limits.Output, s.Stdout, s.Stderr, s.Stream, func() {
		select {
		case kill <- struct{}{}:
		default:
		}
	})
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.WaitDelay = time.Second // a grandchild holding the pipes open must not hang the run
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start: %w", ErrSetup, err)
	}
	group, gm, gerr := attachGroup(cmd, s, backend == BackendWindows)
	mechs = append(mechs, gm...)
	if gerr != nil {
		killGroup(cmd, group)
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: %w", ErrSetup, gerr)
	}
	done := make(chan struct{})
	capped := make(chan string, 1)
	go func() { // ends when the command is waited for, or after killing it
		select {
		case <-done:
			return
		case <-kill:
			capped <- CapOutput
		case <-runCtx.Done():
			if ctx.Err() == nil {
				capped <- CapWall
			}
		}
		killGroup(cmd, group)
	}()
	cpu := exitedCPU(cmd.Process.Pid) // before Wait reaps it: floor_cpu_*.go
	waitErr := cmd.Wait()
	close(done)
	killGroup(cmd, group) // nothing of the run outlives it
	out := &Outcome{Backend: backend, Mechanisms: mechs, Duration: time.Since(start), Truncated: outDone()}
	select {
	case c := <-capped:
		out.CapHit = c
	default:
	}
	out.ExitCode, out.Signal = exitStatus(cmd.ProcessState, waitErr)
	if out.CapHit == "" {
		out.CapHit = floorCapHit(s, cmd.ProcessState, cpu, group)
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("sandbox run: %w", err)
	}
	return out, nil
}

// privateWorkdir picks the directory the floor runs in: the staged view
// copied out, a private copy of Dir when Dir is not writable, or Dir.
func privateWorkdir(s *Spec, tmp string) (string, []Mechanism, error) {
	if s.Stage != nil {
		view := filepath.Join(tmp, "view")
		if err := s.Stage.materialize(view); err != nil {
			return "", nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		rel, err := filepath.Rel(s.Stage.lower, s.Dir)
		if err != nil || !within(s.Dir, s.Stage.lower) {
			rel = "."
		}
		return filepath.Join(view, rel), []Mechanism{{"private-workdir", StateApplied, "staged view copied (cloned where the filesystem can)"}}, nil
	}
	for _, w := range s.Writable {
		if within(s.Dir, w) {
			return s.Dir, []Mechanism{{"private-workdir", StateUnavailable, "working directory is a writable root"}}, nil
		}
	}
	work := filepath.Join(tmp, "work")
	if err := copyTree(s.Dir, work); err != nil {
		return "", nil, fmt.Errorf("%w: copy working directory: %w", ErrSetup, err)
	}
	return work, []Mechanism{{"private-workdir", StateApplied, "private copy of " + s.Dir}}, nil
}

func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
