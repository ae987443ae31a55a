package sandbox

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestLinuxTierLandlockSecondLine: PID 1's ruleset, built in parts (the
// private /tmp, /dev/shm and the devices before the config, the root and
// the writable roots after), lets the command write exactly where the
// linux tier's second line allows: the writable root, /tmp, /dev/shm and
// /dev/null work; a file the mounts leave writable but no rule covers
// (the process's own /proc/self/oom_score_adj) is refused, and so is
// signalling PID 1 (outside the command's domain; ABI 6 scopes); on a
// cold stage and on warm ones, whose prepared mounts a root bound ahead
// takes. Controls: the same write and signal work uncontained.
func TestLinuxTierLandlockSecondLine(t *testing.T) {
	requireLinuxBackend(t)
	if landlockABI() < 1 {
		t.Skip("the kernel has no Landlock")
	}
	onlyPID1(t) // rootfs_hint_linux_test.go
	t.Run("cold", secondLine)
	t.Run("warm", func(t *testing.T) {
		keepWarm(t) // warm_linux_test.go
		for i := 0; i < 3; i++ {
			secondLine(t)
		}
	})
}

func secondLine(t *testing.T) {
	work := sandboxtest.Dir(t)
	script := `set -u
for f in ` + filepath.Join(work, "w") + ` /tmp/w /dev/shm/w; do echo x > "$f" && echo "wrote $f"; done
echo x > /dev/null && echo "wrote /dev/null"
echo 1000 > /proc/self/oom_score_adj && echo "wrote oom_score_adj"
kill -0 1 && echo "signalled pid 1"
echo done`
	out, output := run(t, Spec{Argv: []string{"sh", "-c", script}, Dir: work, Writable: []string{work}})
	if out.ExitCode != 0 || !strings.Contains(output, "done") {
		t.Fatalf("exit %d:\n%s", out.ExitCode, output)
	}
	var applied string
	for _, m := range out.Mechanisms {
		if m.Name == "landlock" {
			if m.State != StateApplied {
				t.Fatalf("landlock %s: %s", m.State, m.Detail)
			}
			applied = m.Detail
		}
	}
	if !strings.Contains(applied, "writes only to 3 roots") {
		t.Errorf("landlock mechanism %q, want 3 write roots (/tmp, /dev/shm, the workspace)", applied)
	}
	for _, f := range []string{filepath.Join(work, "w"), "/tmp/w", "/dev/shm/w", "/dev/null"} {
		if !strings.Contains(output, "wrote "+f+"\n") {
			t.Errorf("the command could not write %s:\n%s", f, output)
		}
	}
	if strings.Contains(output, "wrote oom_score_adj") {
		t.Errorf("the command wrote a /proc file no rule covers:\n%s", output)
	}
	if landlockABI() >= 6 && strings.Contains(output, "signalled pid 1") {
		t.Errorf("the command signalled PID 1 across the signal scope:\n%s", output)
	}
	// Controls.
	if got := control(t, work, "sh", "-c", "echo 1000 > /proc/self/oom_score_adj && echo wrote"); !strings.Contains(got, "wrote") {
		t.Fatalf("uncontained control could not write its oom_score_adj: %q", got)
	}
	if b, err := exec.Command("sh", "-c", "kill -0 $PPID && echo ok").CombinedOutput(); err != nil || !strings.Contains(string(b), "ok") {
		t.Fatalf("uncontained control could not signal its parent: %v %s", err, b)
	}
}
