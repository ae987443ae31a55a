//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestSandboxTierCLI re-runs TestSandboxTierCLIInside where user
// namespaces are unavailable (inside `bwrap --unshare-user
// --disable-userns`): doctor and `sandbox run` must name the landlock
// tier and say, in words, why the linux tier is not used.
func TestSandboxTierCLI(t *testing.T) {
	if sandboxtest.NoUserns() {
		t.Skip("already the re-run")
	}
	sandboxtest.Rerun{Run: "^TestSandboxTierCLIInside$", Want: "TestSandboxTierCLIInside", NoUserns: true}.Do(t)
}

func TestSandboxTierCLIInside(t *testing.T) {
	if !sandboxtest.NoUserns() {
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
