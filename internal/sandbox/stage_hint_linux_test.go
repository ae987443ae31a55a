package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestStageHintEnv: a stage started with a hint gets what every stage
// gets (stageEnv: GORACE where the caller has it) and the hint, which
// decodes to what was sent; a hint that cannot be sent leaves the
// environment alone (TestHintEnvRoundTrip, internal/rootfs, has the
// encoding).
func TestStageHintEnv(t *testing.T) {
	parts := []string{rootfs.HintArg, "0", "1", "/a:b", "0"}
	cmd := exec.Command("true")
	withStageHint(cmd, parts)
	base := stageEnv()
	if len(cmd.Env) != len(base)+1 || !slices.Equal(cmd.Env[:len(base)], base) || !strings.HasPrefix(cmd.Env[len(base)], rootfs.HintEnv+"=") {
		t.Fatalf("environment %q", cmd.Env)
	}
	if got := rootfs.DecodeHintEnv(strings.TrimPrefix(cmd.Env[len(base)], rootfs.HintEnv+"=")); !slices.Equal(got, parts) {
		t.Fatalf("got %q, want %q", got, parts)
	}
	for _, hint := range [][]string{nil, {"/a\x00b"}} {
		cmd := exec.Command("true")
		withStageHint(cmd, hint)
		if cmd.Env != nil {
			t.Errorf("hint %q was sent", hint)
		}
	}
}

// TestHintUnseenInside: a warm stage's hint names the view's paths (and,
// for PID 1, the masked ones); the command it then runs reads its parent
// stage's command line and environment and finds none of them, though the
// command line itself is readable there. Control: from outside, the
// caller's user reads the hint in the waiting stage's environment, so the
// hint was sent and the run that took that stage had it.
func TestHintUnseenInside(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			onlyPID1(t) // the spawn stage (a large caller's, as under -race) gets no hint
			useReexec(t)
			keepWarm(t)
			dir := sandboxtest.Dir(t)
			secrets := []string{dir}
			if tier == BackendLinux {
				secrets = append(secrets, os.Getenv("IOH_STATE_DIR")) // masked
			}
			script := `for f in cmdline environ; do cat /proc/$PPID/$f 2>/dev/null | tr '\0' '\n'; done`
			spec := Spec{Argv: []string{"sh", "-c", script}, Dir: dir, Writable: []string{dir}, Backend: tier}
			runTier(t, spec)
			pid := waitWarm(t, kindOf(tier))
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if !bytes.Contains(env, []byte(s)) {
					t.Fatalf("control: the waiting stage's environment has no %s: %q", s, env)
				}
			}
			out, output := runTier(t, spec)
			if testPool.os.stages.lastClaim.Load() != int64(pid) {
				t.Fatal("the run did not take the hinted stage")
			}
			if out.ExitCode != 0 || !strings.Contains(output, stagePrefix) {
				t.Fatalf("the stage's command line is not readable inside (exit %d): %q", out.ExitCode, output)
			}
			for _, s := range secrets {
				if strings.Contains(output, s) {
					t.Errorf("the command read %s in its stage's command line or environment:\n%s", s, output)
				}
			}
		})
	}
}
