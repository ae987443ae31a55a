package lsp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// deadline is a context for one hostile-input test: a request that blocks
// (a FIFO, an endless read) fails the test instead of hanging it.
func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	t.Cleanup(cancel)
	return ctx
}

// TestRunRefusesContractsThatAreNotFiles: ioh.run naming /dev/zero, a
// FIFO or an oversized file answers an error at once (before, /dev/zero
// was read until memory ran out and a FIFO hung the request), and the
// server goes on to run a real contract.
func TestRunRefusesContractsThatAreNotFiles(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := deadline(t)
	fifo := filepath.Join(f.dir, "task.ioh.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(f.dir, "big.ioh.yaml")
	writeFile(t, big, "version: 1\ngoal: big\n#"+strings.Repeat("x", 2<<20)+"\n")
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "not a regular file"},
		{fifo, "not a regular file"},
		{big, "larger than"},
	} {
		_, err := f.editor.RunID(ctx, "ioh.run", map[string]any{"contract": tc.path})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ioh.run %s: %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
	id := f.start(ctx, "ioh.run", inline("greet", f.cassette(edit("a.txt", "hello", "world"), finish("done"))))
	if got := f.awaitEnd(ctx, id); got == "" {
		t.Error("the server did not run a real contract after the refused ones")
	}
}

// TestInlineCassetteOutsideTheWorkspaceRevealsNothing: an inline contract
// naming a cassette outside the workspace is refused before the file is
// opened; the error carries none of its bytes (before, a JSON error
// quoted its first byte). The control: the same bytes inside the
// workspace are read (and refused as not a cassette, still without
// quoting them).
func TestInlineCassetteOutsideTheWorkspaceRevealsNothing(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	ctx := deadline(t)
	secret := []byte("Zq9-secret-material\n")
	outside := filepath.Join(t.TempDir(), "id_key")
	inside := filepath.Join(f.dir, "not-a-cassette")
	for _, p := range []string{outside, inside} {
		if err := os.WriteFile(p, secret, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{outside, "must be inside the workspace"},
		{inside, "not valid JSON at byte 1"},
	} {
		_, err := f.editor.RunID(ctx, "ioh.run", inline("leak", tc.path))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cassette %s: %v, want an error saying %q", tc.path, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Zq9") || strings.Contains(err.Error(), "'Z'")) {
			t.Errorf("cassette %s: the error reveals the file: %v", tc.path, err)
		}
	}
}

// envFixture is a fixture whose harness reads the given environment
// (a user config under its own XDG_CONFIG_HOME) and whose editor records
// log messages.
func envFixture(t *testing.T, files map[string]string, env map[string]string) *fixture {
	t.Helper()
	dir, state := t.TempDir(), t.TempDir()
	for name, body := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), body)
	}
	getenv := func(k string) string {
		if k == "IOH_STATE_DIR" {
			return state
		}
		return env[k]
	}
	factory := func(ctx context.Context, s lsp.Session) (*lsp.Engine, error) {
		e, err := wire.NewHarness(ctx, wire.Options{
			Root: s.Root, Getenv: getenv, Environ: func() []string { return nil },
			Approver: s.Approver, Sink: s.Sink, EditorSettings: s.EditorSettings, Logger: s.Logger,
		})
		if err != nil {
			return nil, err
		}
		return &lsp.Engine{Harness: e.Harness, Root: e.Root, Close: e.Close}, nil
	}
	srv := lsp.New(lsp.Options{Logger: slog.New(slog.DiscardHandler), NewHarness: factory, Version: "test", StateDir: filepath.Join(state, "lsp")})
	return &fixture{t: t, dir: dir, state: state, editor: lsptest.Start(t, srv, lsptest.Config{Root: dir})}
}

// TestIgnoredEndpointIsShownBeforeTheRunFailsToStart: an untrusted task
// file naming its own endpoint, with no provider in the user config: the
// editor gets the "ignored" warnings before the error that the run could
// not start, and the task file's server gets nothing.
func TestIgnoredEndpointIsShownBeforeTheRunFailsToStart(t *testing.T) {
	var hits atomic.Int32
	theirs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer theirs.Close()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "ioh", "config.yaml"), "approve: never\n")
	task := "version: 1\ngoal: g\nmodel: {provider: openai-compatible, name: x, base_url: " + theirs.URL + "}\n"
	f := envFixture(t, map[string]string{"task.ioh.yaml": task}, map[string]string{"HOME": home, "XDG_CONFIG_HOME": home})
	ctx := deadline(t)
	_, err := f.editor.RunID(ctx, "ioh.run", map[string]any{"contract": filepath.Join(f.dir, "task.ioh.yaml")})
	if err == nil || !strings.Contains(err.Error(), "no model provider configured") {
		t.Fatalf("ioh.run: %v, want the run to fail to start for want of a provider", err)
	}
	logs := strings.Join(f.editor.Snapshot().Logs, "\n")
	for _, key := range []string{"model.provider ignored", "model.base_url ignored"} {
		if !strings.Contains(logs, key) {
			t.Errorf("the editor was not told %q before the error; logs:\n%s", key, logs)
		}
	}
	if hits.Load() != 0 {
		t.Error("the task file's endpoint got a request")
	}
}

// TestCheckOutputNamingADeviceIsNotRead: a failing check's output names a
// workspace path that is a symlink to /dev/zero (a repository can ship
// one). The server places the error diagnostic without reading the device
// (before, it read /dev/zero until memory ran out).
func TestCheckOutputNamingADeviceIsNotRead(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, lsptest.Config{})
	if err := os.Symlink("/dev/zero", filepath.Join(f.dir, "zero.go")); err != nil {
		t.Fatal(err)
	}
	ctx := deadline(t)
	check := []string{"sh", "-c", "echo 'zero.go:1:1: boom'; exit 1"}
	id := f.start(ctx, "ioh.run", inline("fail", f.cassette(edit("a.txt", "hello", "world"), finish("done"), finish("done"), finish("done")), check))
	if _, err := f.editor.Expect(ctx, lsptest.ProgressEnd("ioh/"+id), f.editor.DiagnosticAt("zero.go", 0, "boom")); err != nil {
		t.Fatal(err)
	}
}
