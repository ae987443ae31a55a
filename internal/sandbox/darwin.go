//go:build darwin

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

func candidates() []backend { return []backend{macBackend{}, floorBackend{}} }

func stageMain(name string) int {
	if name == floorArg {
		return floorMain()
	}
	return 2
}

// sandboxExec is the Seatbelt front end shipped with macOS.
const sandboxExec = "/usr/bin/sandbox-exec"

// macBackend runs the floor's stage under sandbox-exec with a profile
// generated for the run (profile.go).
type macBackend struct{}

func (macBackend) name() string { return BackendMacOS }

func (b macBackend) run(ctx context.Context, s *Spec) (*Outcome, error) {
	if _, err := os.Stat(sandboxExec); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSetup, sandboxExec, err)
	}
	return runProcess(ctx, s, BackendMacOS, func(cmd *exec.Cmd, s *Spec, tmp string) ([]Mechanism, error) {
		// The floor stage (this binary) is what sandbox-exec starts.
		view := macReadView(s, tmp, cmd.Path) // profile_view.go
		prof := buildMacProfile(view)
		args := append(prof.args(), cmd.Path)
		args = append(args, cmd.Args[1:]...)
		cmd.Path = sandboxExec
		cmd.Args = append([]string{sandboxExec}, args...)
		net := Mechanism{"network-isolation", StateApplied, "network denied"}
		if s.Network {
			net = Mechanism{"network-isolation", StateUnavailable, "network requested"}
		}
		return []Mechanism{
			{"seatbelt", StateApplied, "sandbox-exec profile generated for this run"},
			{"read-view", StateApplied, fmt.Sprintf("%d paths readable: system directories, workspace, writable roots, toolchains; the rest of every home absent", len(view.Read))},
			{"filesystem-confinement", StateApplied, fmt.Sprintf("writes only to %d roots", len(view.Writable))},
			{"mask-secrets", StateApplied, fmt.Sprintf("%d paths unreadable", len(view.Deny))},
			net,
		}, nil
	})
}

func (b macBackend) probe(ctx context.Context) ([]Mechanism, error) {
	return probeByRunning(ctx, b)
}
