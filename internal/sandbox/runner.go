package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
)

// backend is one containment mechanism family.
type backend interface {
	name() string
	// run executes s; an error wrapping ErrSetup means the command never
	// started.
	run(ctx context.Context, s *Spec) (*Outcome, error)
	// probe really spawns a trivial command under the backend and returns
	// the mechanisms that applied.
	probe(ctx context.Context) ([]Mechanism, error)
}

// Runner runs Specs under the strongest backend that works. The choice is
// made once per process, by really spawning: the first run under the
// automatic choice is itself the probe (its setup reports before the
// command starts), and a backend whose setup fails is passed over, with
// the reason kept in every later Outcome's Downgrade. Safe for concurrent
// use.
type Runner struct {
	log  *slog.Logger
	pool *Pool // what runs keep for the next one (nil: the cold path)
}

// The selection state is a fact of the host, kept process-wide: a
// backend is recorded as failed only when a trivial probe under it fails
// too (not when one Spec cannot be set up), so every Runner of the
// process, with a pool or without, learns it once and skips the probe.
var (
	selMu     sync.Mutex
	selFailed = map[string]string{} // backend name → why it cannot run
	selChosen string                // a backend that ran a command
)

// NewRunner returns a Runner logging to log (nil: slog.Default()). By
// default its runs take the cold path: each does its own setup in line
// and leaves nothing behind, as a one-shot command wants. A long-lived
// caller that runs many commands (the server, an agent run) gives it a
// Pool (WithPool): on Linux each run's stage is then started ahead of the
// run it will serve (warm_linux.go), so the next run of the same kind
// skips the process start and the clone into namespaces, and a run
// returns once its stage has reported the end, while the stage's exit and
// the removal of its cgroups finish in the background, which Pool.Close
// waits for.
func NewRunner(log *slog.Logger, opts ...RunnerOption) *Runner {
	if log == nil {
		log = slog.Default()
	}
	r := &Runner{log: log}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Run runs s and reports what happened. A non-nil Outcome comes back when
// the command ran; errors wrapping ErrSetup mean it never started.
func (r *Runner) Run(ctx context.Context, s *Spec) (*Outcome, error) {
	spec, err := s.validate()
	if err != nil {
		return nil, err
	}
	if len(s.View.Read) == 0 && appliesView(spec.Backend) {
		return nil, fmt.Errorf("%w: the Spec's View reads nothing of the host (not even /usr: no shell or library loads), and the %s tier applies it as is; give it a view: policy.Default (internal/sandbox/policy), or ioh.DefaultView for an embedder", ErrBadSpec, tierOrAuto(spec.Backend))
	}
	spec.pool = r.pool
	if spec.Backend != "" {
		if tierRank(spec.Backend) < tierRank(spec.Require) {
			return nil, fmt.Errorf("%w: backend %s was asked for, but at least the %s tier is required (sandbox.require)", ErrBelowRequired, spec.Backend, spec.Require)
		}
		b := byName(spec.Backend)
		if b == nil {
			return nil, fmt.Errorf("%w: %s does not run on %s", ErrBackendUnavailable, spec.Backend, runtime.GOOS)
		}
		selMu.Lock()
		why, failed := selFailed[spec.Backend]
		selMu.Unlock()
		if failed {
			return nil, fmt.Errorf("%w: %s: %s", ErrBackendUnavailable, spec.Backend, why)
		}
		out, err := b.run(ctx, spec)
		if errors.Is(err, ErrSetup) {
			if why := explainFailure(spec.Backend, err); why != err.Error() {
				return nil, fmt.Errorf("%w: %s: %s", ErrBackendUnavailable, spec.Backend, why)
			}
			return nil, fmt.Errorf("%w: %s: %w", ErrBackendUnavailable, spec.Backend, err)
		}
		return out, err
	}
	var downgrade []string
	for _, b := range candidates() {
		selMu.Lock()
		why, failed := selFailed[b.name()]
		chosen := selChosen
		selMu.Unlock()
		if failed {
			downgrade = append(downgrade, b.name()+": "+why)
			continue
		}
		if tierRank(b.name()) < tierRank(spec.Require) {
			return nil, belowRequired(spec.Require, b.name(), downgrade)
		}
		out, err := b.run(ctx, spec)
		if errors.Is(err, ErrSetup) && chosen != b.name() && ctx.Err() == nil {
			// Never ran here before: probe with a trivial command to tell
			// a backend that cannot work on this machine from a Spec that
			// cannot be set up (which is the caller's error).
			if _, perr := b.probe(ctx); perr == nil {
				selMu.Lock()
				selChosen = b.name()
				selMu.Unlock()
				return nil, err
			}
			why := explainFailure(b.name(), err)
			selMu.Lock()
			selFailed[b.name()] = why
			selMu.Unlock()
			r.log.Warn("sandbox backend unavailable", "backend", b.name(), "why", why)
			downgrade = append(downgrade, b.name()+": "+why)
			continue
		}
		if err == nil || out != nil {
			selMu.Lock()
			selChosen = b.name()
			selMu.Unlock()
		}
		if out != nil && len(downgrade) > 0 {
			out.Downgrade = joinReasons(downgrade)
		}
		return out, err
	}
	return nil, fmt.Errorf("%w: no backend works: %s", ErrBackendUnavailable, joinReasons(downgrade))
}

// appliesView reports whether the named tier ("": the automatic choice,
// whatever this platform may pick) runs here and confines reads to
// Spec.View: the linux, landlock and macOS tiers do; the floor and
// Windows tiers bound resources only.
func appliesView(name string) bool {
	if name != "" {
		return byName(name) != nil && (name == BackendLinux || name == BackendLandlock || name == BackendMacOS)
	}
	for _, b := range candidates() {
		if appliesView(b.name()) {
			return true
		}
	}
	return false
}

// tierOrAuto names a Spec's tier in an error: its Backend, or the
// automatic choice.
func tierOrAuto(name string) string {
	if name == "" {
		return "automatically chosen"
	}
	return name
}

// tierRank orders the backends by how much they contain: the namespace
// tier above the ones that confine files and network without namespaces
// (landlock, macOS), above those that only bound resources (floor,
// Windows). "" ranks lowest, so an empty requirement admits everything.
func tierRank(name string) int {
	switch name {
	case BackendLinux:
		return 3
	case BackendLandlock, BackendMacOS:
		return 2
	case BackendFloor, BackendWindows:
		return 1
	}
	return 0
}

// belowRequired is the error of an automatic choice that would fall below
// the required tier: why each stronger tier failed, and what to do.
func belowRequired(require, got string, why []string) error {
	msg := fmt.Sprintf("%s: model-produced code needs at least the %s tier (sandbox.require), but only %s works here", ErrBelowRequired.Error(), require, got)
	if len(why) > 0 {
		msg += ": " + joinReasons(why)
	}
	msg += fmt.Sprintf("; fix the cause above, or accept weaker containment with `sandbox: {require: %s}` in your user config", got)
	return &requireError{msg: msg}
}

// requireError carries the full explanation and matches ErrBelowRequired.
type requireError struct{ msg string }

func (e *requireError) Error() string        { return e.msg }
func (e *requireError) Is(target error) bool { return target == ErrBelowRequired }

func byName(name string) backend {
	for _, b := range candidates() {
		if b.name() == name {
			return b
		}
	}
	return nil
}

func joinReasons(rs []string) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += "; "
		}
		s += r
	}
	return s
}

// probeByRunning is the probe of backends that have no dry-run mode: it
// runs the platform's `true` under b in a throwaway writable directory,
// with the probe caps so the limit mechanisms are exercised too.
func probeByRunning(ctx context.Context, b backend) ([]Mechanism, error) {
	dir, err := os.MkdirTemp("", "ioh-"+b.name()+"-probe-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer os.RemoveAll(dir)
	s, err := (&Spec{Argv: trueArgv(), Dir: dir, Writable: []string{dir}, Limits: probeLimits, View: trueView}).validate()
	if err != nil {
		return nil, err
	}
	return probeOutcome(b.run(ctx, s))
}

// probeOutcome turns a probe run into the mechanisms that applied, or an
// ErrSetup when the trivial command did not exit 0.
func probeOutcome(out *Outcome, err error) ([]Mechanism, error) {
	if err != nil {
		return nil, err
	}
	if out.ExitCode != 0 {
		return out.Mechanisms, fmt.Errorf("%w: probe exited %d", ErrSetup, out.ExitCode)
	}
	return out.Mechanisms, nil
}
