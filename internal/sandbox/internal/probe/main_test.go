package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// stderrOf runs the probe with args and returns its exit code and what
// it wrote to stderr.
func stderrOf(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	code := run(args)
	os.Stderr = old
	w.Close()
	b, _ := io.ReadAll(r)
	return code, string(b)
}

// TestRunExitCodes: 0 when the action worked, 1 when it was refused (the
// error named), 2 for a call that is wrong (no action, too few
// arguments, an action neither the probe nor a test binary beside it
// has), each saying what is wrong; never a panic.
func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{helperArg, "write", file}, 0, ""},
		{[]string{"read", file}, 0, ""},
		{[]string{helperArg, "read", filepath.Join(dir, "missing")}, 1, "helper read: open "},
		{nil, 2, "usage: probe ACTION"},
		{[]string{helperArg}, 2, "usage: probe ACTION"},
		{[]string{helperArg, "link", file}, 2, "link takes 2 arguments, got 1"},
		{[]string{"spin", "soon"}, 1, `invalid duration "soon"`},
		{[]string{"no-such-action"}, 2, `unknown action "no-such-action"`},
	} {
		code, stderr := stderrOf(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.says) {
			t.Errorf("probe %q: exit %d, stderr %q; want exit %d saying %q", c.args, code, stderr, c.code, c.says)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "x" {
		t.Errorf("write left %q, %v", b, err)
	}
}
