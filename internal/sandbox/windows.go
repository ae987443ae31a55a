//go:build windows

package sandbox

import (
	"context"
	"os/exec"
)

// windowsBackend runs the command in a Job Object with kill-on-close and
// the CPU time, memory and active-process caps (floor_windows.go), plus
// the floor's scrubbed environment and private working copy.
type windowsBackend struct{}

func (windowsBackend) name() string { return BackendWindows }

func (windowsBackend) run(ctx context.Context, s *Spec) (*Outcome, error) {
	return runProcess(ctx, s, BackendWindows, func(_ *exec.Cmd, s *Spec, _ string) ([]Mechanism, error) {
		return []Mechanism{
			{"filesystem-confinement", StateUnavailable, "the Windows backend confines processes and resources, not paths"},
			{"network-isolation", StateUnavailable, "the Windows backend cannot deny the network"},
		}, nil
	})
}

func (b windowsBackend) probe(ctx context.Context) ([]Mechanism, error) {
	return probeByRunning(ctx, b)
}
