package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoEndToEnd builds the binary and runs `ioh-lsp demo`: a real
// server child over stdio, the replay provider, the real sandbox.
func TestDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the whole demo")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the demo runs `go test` on its example; no go tool on PATH")
	}
	bin := filepath.Join(t.TempDir(), "ioh-lsp")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(context.Background(), bin, "demo")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"FAILS before the fix",
		`code actions offered: "Fix with agent`,
		"progress begin:",
		`sandboxed check "tests" passed`,
		"workspace/applyEdit",
		"-	return sum / float64(len(xs)-1)",
		"+	return sum / float64(len(xs))",
		`review group "Implementation"`,
		"approved: edit applied",
		"diagnostic on stats.go:13 [info]: run r-",
		"progress end: completed: applied",
		"PASSES after the fix",
		"server shut down cleanly",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", text)
	}
}
