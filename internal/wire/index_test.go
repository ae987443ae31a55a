package wire

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// The server's engines (Options.Index) keep a workspace index under the
// state directory; a search through the engine's root answers with text
// saved after the index was built, and Close leaves the index file for
// the next start and for `ioh-lsp grep`.
func TestNewHarnessKeepsIndex(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // ParseDuration\n"), 0o644)
	state := t.TempDir()
	env := map[string]string{"IOH_STATE_DIR": state, "HOME": t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eng, err := NewHarness(ctx, Options{
		Root: dir, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		Approver: applyAll{}, Index: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var idx []string
	for len(idx) == 0 {
		if ctx.Err() != nil {
			eng.Close()
			t.Fatal("no index file appeared under the state directory")
		}
		idx, _ = filepath.Glob(filepath.Join(state, "index", "*.idx"))
		time.Sleep(10 * time.Millisecond)
	}
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a // ParseDuration too\n"), 0o644)
	ms, err := eng.Root.Grep(ctx, workspace.GrepOptions{Pattern: "ParseDuration"})
	eng.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Errorf("grep found %v, want a.go and the file saved after the build", ms)
	}
	fi, err := os.Stat(idx[0])
	if err != nil {
		t.Fatalf("index file gone after Close: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("index file mode %v, want 0600", fi.Mode().Perm())
	}
}
