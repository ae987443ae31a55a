package sandbox

import (
	"strings"
	"testing"
	"time"
)

// TestSpawnStage forces the path large callers take (PID 1 started by the
// spawn stage) and checks it contains and caps like the direct one.
func TestSpawnStage(t *testing.T) {
	requireLinuxBackend(t)
	old := spawnerThreshold
	spawnerThreshold = -1
	t.Cleanup(func() { spawnerThreshold = old })

	out, output := run(t, Spec{Argv: []string{"sh", "-c", "test -d /proc/2 || exit 9; touch /etc/x; exit 5"}, Limits: Limits{Procs: 20}})
	if out.ExitCode != 5 || !strings.Contains(output, "Read-only file system") {
		t.Errorf("via the spawn stage: exit %d output %q", out.ExitCode, output)
	}
	if !hasMechanism(out, "seccomp", StateApplied) || !hasMechanism(out, "pid-namespace", StateApplied) {
		t.Errorf("mechanisms %+v", out.Mechanisms)
	}
	out, output = run(t, Spec{Argv: []string{"sleep", "30"}, Limits: Limits{Wall: 200 * time.Millisecond}})
	if out.CapHit != CapWall || out.ExitCode != 137 {
		t.Errorf("wall cap via the spawn stage: %+v %s", out, output)
	}
}
