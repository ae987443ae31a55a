package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/wire"
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

// TestDiffAppliedBinary: the diff of an applied change is the change as
// applied, against the tree before the run, even after the user edited a
// file it changed: `git apply` takes it on a copy of the pre-run tree and
// gives exactly the files the run wrote. Before the run was applied
// (control) the same diff is built from the workspace.
func TestDiffAppliedBinary(t *testing.T) {
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
	if err := os.WriteFile(filepath.Join(pristine, "main.go"), []byte(crashMain), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "auto")
	run.Dir, run.Env = dir, env
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	applied := map[string]string{}
	for _, f := range []string{"main.go", "notes.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("the run did not apply %s: %v", f, err)
		}
		applied[f] = string(b)
	}
	// The user edits a file the change touched after it was applied.
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(applied["main.go"]+"// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff := exec.Command(bin, "diff", "--last")
	diff.Dir, diff.Env = dir, env
	var errb strings.Builder
	diff.Stderr = &errb
	patch, err := diff.Output()
	if err != nil {
		t.Fatalf("diff --last: %v\n%s", err, errb.String())
	}
	if strings.Contains(string(patch), "mine") || !strings.Contains(string(patch), "+// added") {
		t.Fatalf("the diff is not the applied change:\n%s", patch)
	}
	apply := exec.Command("git", "apply", "-")
	apply.Dir, apply.Stdin = pristine, strings.NewReader(string(patch))
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("git apply on the pre-run tree: %v\n%s\npatch:\n%s", err, out, patch)
	}
	for f, want := range applied {
		if got, _ := os.ReadFile(filepath.Join(pristine, f)); string(got) != want {
			t.Errorf("%s: git apply gave %q, the run applied %q", f, got, want)
		}
	}
}

// TestDiffAppliedWithoutBases: a change whose snapshot holds only its
// bases' hashes (as older versions stored it), then applied, cannot be
// rebuilt for the files it modified: diff prints what
// it can (the file it created), names the files it leaves out and how
// many, and exits 1 instead of a diff that looks whole.
func TestDiffAppliedWithoutBases(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	dir, env := newCrashWorkspace(t)
	env = append(env, "IOH_TEST_MODEL_DELAY=0s")
	run := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never")
	run.Dir, run.Env = dir, env
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	getenv := func(k string) string { // the last setting wins, as for the binary
		v := ""
		for _, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				v = kv[len(k)+1:]
			}
		}
		return v
	}
	ctx := context.Background()
	st, err := wire.OpenStore(ctx, dir, getenv, func() []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	id := runs[0].ID
	// The snapshot as an older version stored it: a modified file's base
	// by its hash only, the workspace holding it.
	var snap map[string]any
	if err := json.Unmarshal(runs[0].Changes, &snap); err != nil {
		t.Fatal(err)
	}
	for _, c := range snap["changes"].([]any) {
		if ch := c.(map[string]any); ch["base"] != nil {
			delete(ch, "base")
			ch["base_on_disk"] = true
		}
	}
	old, _ := json.Marshal(snap)
	if err := st.SetChanges(ctx, id, old); err != nil {
		t.Fatal(err)
	}
	// Then the change is applied (as the editor applies one) and the
	// outcome recorded.
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(strings.Replace(crashMain, "// end", "// added\n// twice\n// end", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("note\n"), 0o644)
	if err := st.SetOutcome(ctx, id, "applied", "added a line", "", runs[0].State); err != nil {
		t.Fatal(err)
	}
	st.Close()
	diff := exec.Command(bin, "diff", id)
	diff.Dir, diff.Env = dir, env
	var errb strings.Builder
	diff.Stderr = &errb
	patch, err := diff.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("diff of an applied change without bases: %v, want exit 1\n%s", err, errb.String())
	}
	if !strings.Contains(string(patch), "b/notes.txt") || strings.Contains(string(patch), "main.go") {
		t.Errorf("diff printed:\n%s\nwant notes.txt only", patch)
	}
	if msg := errb.String(); !strings.Contains(msg, "main.go") || !strings.Contains(msg, "leaves out 1 of its 2 files") {
		t.Errorf("stderr does not name what is left out:\n%s", msg)
	}
}
