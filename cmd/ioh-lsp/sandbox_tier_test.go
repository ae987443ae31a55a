//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// cliNoUsernsEnv marks the re-run of this test binary without user
// namespaces.
const cliNoUsernsEnv = "IOH_CLI_NO_USERNS"

// TestSandboxTierCLI re-runs TestSandboxTierCLIInside where user
// namespaces are unavailable (inside `bwrap --unshare-user
// --disable-userns`): doctor and `sandbox run` must name the landlock
// tier and say, in words, why the linux tier is not used.
func TestSandboxTierCLI(t *testing.T) {
	if os.Getenv(cliNoUsernsEnv) != "" {
		t.Skip("already the re-run")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed; CI installs it (make test)")
		}
		t.Skip("bubblewrap is not installed: cannot take user namespaces away")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, bwrap, "--unshare-user", "--disable-userns", "--dev-bind", "/", "/", "--",
		self, "-test.run", "^TestSandboxTierCLIInside$", "-test.count=1", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), cliNoUsernsEnv + "=1", "TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + home + "/cfg", "XDG_STATE_HOME=" + home + "/state"}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSandboxTierCLIInside") {
		t.Fatalf("CLI without user namespaces (%v):\n%s", err, out)
	}
}

func TestSandboxTierCLIInside(t *testing.T) {
	if os.Getenv(cliNoUsernsEnv) == "" {
		t.Skip("runs only inside TestSandboxTierCLI's re-run")
	}
	code, out, errs := runCLI(t, "sandbox", "doctor")
	if code != 0 || !strings.Contains(out, "a run gets the landlock tier here") ||
		!strings.Contains(out, "not linux: user namespaces unavailable") || strings.Contains(out, "/proc/self/exe") ||
		!strings.Contains(out, "agent runs accept it: sandbox.require is landlock (default)") {
		t.Errorf("doctor without user namespaces: code %d\n%s%s", code, out, errs)
	}
	// A user config that requires the linux tier: doctor says agent runs
	// (and `sandbox run`) are refused here, and `sandbox run` is.
	userConfig(t, "", "sandbox:\n  require: linux\n")
	code, out, errs = runCLI(t, "sandbox", "doctor")
	if code != 0 || !strings.Contains(out, "agent runs and `sandbox run` are refused here: sandbox.require is linux (user config) and only the landlock tier works") {
		t.Errorf("doctor under require: linux without user namespaces: code %d\n%s%s", code, out, errs)
	}
	t.Chdir(t.TempDir())
	if code, _, errs = runCLI(t, "sandbox", "run", "--", "true"); code != 125 || !strings.Contains(errs, "at least the linux tier") {
		t.Errorf("sandbox run under require: linux without user namespaces: code %d, want 125 naming the required tier; stderr:\n%s", code, errs)
	}
	userConfig(t, "", "") // no user config for the cases below
	dir := t.TempDir()
	t.Chdir(dir)
	code, _, errs = runCLI(t, "sandbox", "run", "--", "true")
	if code != 0 || !strings.Contains(errs, "contained by the landlock tier, not a stronger one: linux: user namespaces unavailable") {
		t.Errorf("sandbox run: code %d, stderr:\n%s", code, errs)
	}
	code, _, errs = runCLI(t, "sandbox", "run", "--backend", "linux", "--", "true")
	if code != 125 || !strings.Contains(errs, "user namespaces unavailable") {
		t.Errorf("sandbox run --backend linux: code %d, want 125 naming the cause; stderr:\n%s", code, errs)
	}
	code, _, errs = runCLI(t, "sandbox", "run", "--backend", "landlock", "--", "sh", "-c", "cat /etc/shadow")
	if code == 0 {
		t.Errorf("sandbox run --backend landlock read /etc/shadow: code %d\n%s", code, errs)
	}
}
