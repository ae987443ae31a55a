package sandbox

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestScratchLayer: a scratch directory shows the host's content and takes
// the command's writes (new files, changed files, deletions) in a private
// layer; the host directory is unchanged afterwards. The paired control:
// the same command over the same directory, not scratch, cannot write.
func TestScratchLayer(t *testing.T) {
	requireLinuxBackend(t)
	dir := sandboxtest.Dir(t)
	host := map[string]string{"a": "host\n", "sub/b": "b\n"}
	writeTree(t, dir, host)
	script := "cat a && echo new > c && echo changed > a && rm sub/b && cat a c && ls sub | wc -l"

	out, output := run(t, Spec{Argv: []string{"sh", "-c", script}, Dir: dir, View: testView(dir), Scratch: []string{dir}})
	if out.ExitCode != 0 {
		t.Fatalf("exit %d in a scratch directory:\n%s", out.ExitCode, output)
	}
	if diff := cmp.Diff(output, "host\nchanged\nnew\n0\n"); diff != "" {
		t.Errorf("the command's view (-got +want):\n%s", diff)
	}
	if !hasMechanism(out, "overlay-scratch", StateApplied) {
		t.Errorf("mechanisms %+v lack an applied overlay-scratch", out.Mechanisms)
	}
	if diff := cmp.Diff(readTree(t, dir), host); diff != "" {
		t.Errorf("the host directory changed (-got +want):\n%s", diff)
	}

	// Control: without the layer the directory is read-only.
	out, output = run(t, Spec{Argv: []string{"sh", "-c", script}, Dir: dir, View: testView(dir)})
	if out.ExitCode == 0 {
		t.Errorf("a directory that is not scratch took writes:\n%s", output)
	}
	if diff := cmp.Diff(readTree(t, dir), host); diff != "" {
		t.Errorf("the host directory changed (-got +want):\n%s", diff)
	}
}

func TestScratchValidation(t *testing.T) {
	requireLinuxBackend(t)
	for _, dirs := range [][]string{{"/"}, {"/nonexistent-ioh-scratch"}} {
		if _, err := (&Spec{Argv: []string{"true"}, Scratch: dirs}).validate(); err == nil {
			t.Errorf("scratch %q accepted", dirs)
		}
	}
	// Inside a writable root the caller wants writes to persist: no layer.
	root := sandboxtest.Dir(t)
	writeTree(t, root, map[string]string{"cache/f": ""})
	c, err := (&Spec{Argv: []string{"true"}, Writable: []string{root}, Scratch: []string{root + "/cache"}}).validate()
	if err != nil || len(c.Scratch) != 0 {
		t.Errorf("scratch inside a writable root: %v, %q; want it left out", err, c.Scratch)
	}
	out, output := run(t, Spec{Argv: []string{"sh", "-c", "echo kept > cache/g"}, Dir: root, Writable: []string{root}, Scratch: []string{root + "/cache"}})
	if out.ExitCode != 0 {
		t.Fatalf("exit %d:\n%s", out.ExitCode, output)
	}
	if got := readTree(t, root)["cache/g"]; got != "kept\n" {
		t.Errorf("a write in a writable root listed as scratch did not persist: %q", got)
	}
	dir := t.TempDir() + "/a,b"
	writeTree(t, dir, map[string]string{"f": ""})
	if _, err := (&Spec{Argv: []string{"true"}, Scratch: []string{dir}}).validate(); !errors.Is(err, ErrBadSpec) {
		t.Errorf("scratch %q: %v, want ErrBadSpec", dir, err)
	}
}
