package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffBinary: a run left pending (--approve never) prints its change
// with `diff --last` and with a prefix of its id; `git apply` takes it on
// a copy of the workspace as it was and produces exactly the files
// approving would write. Control: the workspace itself is untouched until
// approve.
func TestDiffBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := buildBinary(t)
	dir, env := newCrashWorkspace(t)
	env = append(env, "IOH_TEST_MODEL_DELAY=0s")
	pristine := t.TempDir()
	for _, f := range []string{"main.go"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		os.WriteFile(filepath.Join(pristine, f), b, 0o644)
	}
	run := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never")
	run.Dir, run.Env = dir, env
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	diff := exec.Command(bin, "diff", "--last")
	diff.Dir, diff.Env = dir, env
	patch, err := diff.Output()
	if err != nil {
		t.Fatalf("diff --last: %v", err)
	}
	if !strings.Contains(string(patch), "diff --git a/main.go b/main.go") || !strings.Contains(string(patch), "new file mode 100644") {
		t.Fatalf("diff output:\n%s", patch)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != crashMain {
		t.Fatalf("the pending change reached the workspace:\n%s", b)
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "p"), patch, 0o644); err != nil {
		t.Fatal(err)
	}
	apply := exec.Command("git", "apply", "-")
	apply.Dir, apply.Stdin = pristine, strings.NewReader(string(patch))
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, patch)
	}
	approve := exec.Command(bin, "approve", "--last")
	approve.Dir, approve.Env = dir, env
	if out, err := approve.CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	for _, f := range []string{"main.go", "notes.txt"} {
		want, _ := os.ReadFile(filepath.Join(dir, f))
		got, _ := os.ReadFile(filepath.Join(pristine, f))
		if string(got) != string(want) {
			t.Errorf("%s: git apply gave %q, approve wrote %q", f, got, want)
		}
	}
}
