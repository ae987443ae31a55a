package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// TestTaskFileInASubdirectoryReplaysItsOwnCassette: a task file's
// relative cassette names a file beside the task file (resolved once, by
// config.PrepareContract), not one in the workspace root.
func TestTaskFileInASubdirectoryReplaysItsOwnCassette(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := f.ctx()
	sub := filepath.Join(f.dir, "tasks")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.cassette(edit("a.txt", "hello", "world"), finish("greeted")), filepath.Join(sub, "cas.json")); err != nil {
		t.Fatal(err)
	}
	// A decoy of the same name in the root says something else.
	if err := os.Rename(f.cassette(edit("a.txt", "hello", "decoy"), finish("decoy")), filepath.Join(f.dir, "cas.json")); err != nil {
		t.Fatal(err)
	}
	task := "version: 1\ngoal: greet\nmodel: {cassette: cas.json}\nverify:\n  - name: says-world\n    run: [grep, -q, world, a.txt]\n"
	if err := os.WriteFile(filepath.Join(sub, "greet.ioh.yaml"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	f.editor = lsptest.Start(t, newServerFor(f), lsptest.Config{Root: f.dir, Settings: map[string]any{
		"model": map[string]any{"provider": "replay", "name": "test"},
	}})
	id := f.start(ctx, api.Run.Name, api.RunArgs{Contract: "tasks/greet.ioh.yaml"})
	if end := f.awaitEnd(ctx, id); !strings.HasPrefix(end, "completed: applied") {
		t.Fatalf("end %q", end)
	}
	if got := f.read("a.txt"); got != "world\n" {
		t.Errorf("a.txt = %q, want the change of tasks/cas.json", got)
	}
}
