package lsp

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestTaskFileCassetteIsResolvedOnce: the server hands the harness a task
// file's relative cassette as written; config.PrepareContract resolves it
// once, against the task file's directory, and confines it to the
// workspace (TestTaskFileInASubdirectoryReplaysItsOwnCassette runs one).
// Before, the server joined it to the directory itself first.
func TestTaskFileCassetteIsResolvedOnce(t *testing.T) {
	dir := t.TempDir()
	task := filepath.Join(dir, "tasks", "greet.ioh.yaml")
	if err := os.MkdirAll(filepath.Dir(task), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "version: 1\ngoal: greet\nmodel: {provider: replay, name: test, cassette: cas.json}\n"
	if err := os.WriteFile(task, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(Options{Logger: slog.New(slog.DiscardHandler)})
	s.addFolder(dir)
	c, folder, err := s.loadContract("tasks/greet.ioh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if folder != dir || c.Path != task {
		t.Errorf("folder %q path %q, want %q %q", folder, c.Path, dir, task)
	}
	if c.Model.Cassette != "cas.json" {
		t.Errorf("cassette = %q, want it as the task file wrote it (resolved later, once)", c.Model.Cassette)
	}
}
