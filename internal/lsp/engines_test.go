package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// countingFactory wraps the real factory: build n (from 1) gets its own
// state directory state/n, so the files an engine holds open are told
// apart, and every Close is reported on closed with its build number.
// gate, when set, runs at the start of each build (it may block).
type countingFactory struct {
	state  string
	gate   func(ctx context.Context, n int) error
	closed chan int

	mu     sync.Mutex
	builds int
}

func newCountingFactory(state string) *countingFactory {
	return &countingFactory{state: state, closed: make(chan int, 16)}
}

func (c *countingFactory) build(ctx context.Context, s lsp.Session) (*lsp.Engine, error) {
	c.mu.Lock()
	c.builds++
	n := c.builds
	c.mu.Unlock()
	if c.gate != nil {
		if err := c.gate(ctx, n); err != nil {
			return nil, err
		}
	}
	eng, err := wireFactory(c.stateOf(n))(ctx, s)
	if err != nil {
		return nil, err
	}
	inner := eng.Close
	eng.Close = func() {
		inner()
		c.closed <- n
	}
	return eng, nil
}

func (c *countingFactory) stateOf(n int) string { return filepath.Join(c.state, fmt.Sprint(n)) }

func (c *countingFactory) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}

// fdsUnder counts this process's open file descriptors whose file is
// under dir (Linux: /proc/self/fd); -1 where /proc is not there.
func fdsUnder(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

// newFactoryFixture is newFixture with the engine factory given.
func newFactoryFixture(t *testing.T, files map[string]string, cfg lsptest.Config, factory lsp.HarnessFactory) *fixture {
	t.Helper()
	dir, state := t.TempDir(), t.TempDir()
	for name, body := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), body)
	}
	srv := lsp.New(lsp.Options{Logger: slog.New(slog.DiscardHandler), NewHarness: factory, Version: "test", StateDir: filepath.Join(state, "lsp")})
	cfg.Root = dir
	return &fixture{t: t, dir: dir, state: state, editor: lsptest.Start(t, srv, cfg)}
}

// An engine is built outside the engines lock: while one request waits on
// a slow build (a store on a slow disk), a didOpen — handled on the read
// loop, where it updates every engine's overlay — and an unrelated request
// after it are answered. Before, didOpen waited for the lock the build
// held, and with it the whole connection. The buffer opened during the
// build is in the new engine's overlay.
func TestSlowEngineBuildDoesNotBlockTheReadLoop(t *testing.T) {
	state := t.TempDir()
	cf := newCountingFactory(state)
	entered, release := make(chan struct{}), make(chan struct{})
	cf.gate = func(ctx context.Context, n int) error {
		if n != 1 {
			return nil
		}
		close(entered)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f := newFactoryFixture(t, map[string]string{"a.txt": "on disk\n"}, lsptest.Config{}, cf.build)
	ctx := f.ctx()

	slow := make(chan error, 1)
	go func() {
		_, err := f.editor.ExecuteCommand(ctx, "ioh.runs", nil)
		slow <- err
	}()
	<-entered // the build is under way and will not end until released

	// didOpen then codeAction: any answer proves the read loop moved past
	// didOpen. With the read loop stuck the pipe takes no more writes, so
	// the calls are made on a goroutine and the wait is the test's
	// deadline.
	answered := make(chan error, 1)
	go func() {
		if err := f.editor.OpenText(ctx, "a.txt", "in the buffer\n"); err != nil {
			answered <- err
			return
		}
		_, err := f.editor.CodeActions(ctx, "a.txt", protocol.Range{}, nil)
		answered <- err
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("didOpen and codeAction while an engine was being built: %v", err)
		}
	case <-ctx.Done():
		close(release)
		t.Fatal("the read loop stopped while an engine was being built: didOpen and a codeAction after it were never answered")
	}
	select {
	case err := <-slow:
		t.Fatalf("the slow request ended before its build was released: %v", err)
	default:
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatalf("ioh.runs after the build: %v", err)
	}

	// The buffer opened mid-build reached the engine's overlay: the agent
	// edits the buffer's text (not on disk) and the check sees it.
	id := f.start(ctx, "ioh.run", inline("edit the buffer", f.cassette(edit("a.txt", "in the buffer", "edited in the buffer"), finish("edited")),
		[]string{"grep", "-q", "edited in the buffer", "a.txt"}))
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "applied") {
		t.Errorf("the run did not edit the buffer opened during the build: %q", end)
	}
	if n := cf.count(); n != 1 {
		t.Errorf("%d engines built, want 1", n)
	}
}

// Two requests that find no engine build one each; the first to finish is
// kept and the other is closed at once (not leaked until the session
// ends), and both requests are answered.
func TestConcurrentBuildsKeepOneEngine(t *testing.T) {
	state := t.TempDir()
	cf := newCountingFactory(state)
	entered, release := make(chan int, 2), make(chan struct{})
	cf.gate = func(ctx context.Context, n int) error {
		entered <- n
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f := newFactoryFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{}, cf.build)
	ctx := f.ctx()
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := f.editor.ExecuteCommand(ctx, "ioh.runs", nil)
			done <- err
		}()
	}
	for range 2 { // both builds are under way at once
		select {
		case <-entered:
		case <-ctx.Done():
			close(release)
			t.Fatal("the second build never started while the first was under way: builds are serialised")
		}
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("ioh.runs: %v", err)
		}
	}
	// The loser closed its engine before its request answered.
	var closedOne int
	select {
	case closedOne = <-cf.closed:
	default:
		t.Fatal("neither of the two engines built at once was closed")
	}
	select {
	case n := <-cf.closed:
		t.Fatalf("both engines were closed (%d, %d); one must stay live", closedOne, n)
	default:
	}
	if fds := fdsUnder(t, cf.stateOf(closedOne)); fds > 0 {
		t.Errorf("the discarded engine %d still holds %d files open", closedOne, fds)
	}
	// Later requests use the kept engine: no third build.
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.runs", nil); err != nil {
		t.Fatal(err)
	}
	if n := cf.count(); n != 2 {
		t.Errorf("%d engines built, want 2", n)
	}
}

// An engine replaced by new settings keeps its trace store open while a
// run started on it is in flight, and closes it (every file handle under
// its state directory) when that run ends. A replaced engine no run holds
// closes at once. Before, retired engines stayed open until the session
// ended.
func TestRetiredEngineClosesAfterItsLastRun(t *testing.T) {
	state := t.TempDir()
	cf := newCountingFactory(state)
	g := newGate(t)
	f := newFactoryFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{Hooks: lsptest.Hooks{ShowMessageRequest: g.hook}}, cf.build)
	ctx := f.ctx()

	id := f.start(ctx, "ioh.run", inline("run true", f.cassette(runTrue(), finish("nothing to change"))))
	<-g.asked // the run, on engine 1, waits on the user
	first := cf.stateOf(1)
	open1 := fdsUnder(t, first)
	if open1 == 0 {
		t.Fatalf("engine 1 holds no file under its state directory %s; the test is looking in the wrong place", first)
	}

	pushSettings(t, f, map[string]any{"approve": "ask"})
	// ioh.runs is handled after the pushed settings (notifications are
	// handled in order on the read loop) and builds engine 2.
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.runs", nil); err != nil {
		t.Fatal(err)
	}
	if n := cf.count(); n != 2 {
		t.Fatalf("%d engines built, want 2 (the settings change replaces engine 1)", n)
	}
	select {
	case n := <-cf.closed:
		t.Fatalf("engine %d closed while its run was in flight", n)
	default:
	}
	if open1 >= 0 {
		if n := fdsUnder(t, first); n == 0 {
			t.Fatal("engine 1's files were closed while its run was in flight")
		}
	}

	g.release <- "Allow once"
	if end := f.awaitEnd(ctx, id); !strings.Contains(end, "completed") {
		t.Errorf("run ended %q", end)
	}
	if n := awaitClosed(t, ctx, cf); n != 1 {
		t.Fatalf("engine %d closed when the run on engine 1 ended", n)
	}
	if open1 >= 0 {
		if n := fdsUnder(t, first); n != 0 {
			t.Errorf("engine 1 was closed but %d files under its state directory are still open", n)
		}
	}
	if n := fdsUnder(t, cf.stateOf(2)); n == 0 {
		t.Error("engine 2, live, holds no file open")
	}

	// Engine 2 holds no run: new settings close it at once.
	pushSettings(t, f, map[string]any{"approve": "never"})
	if n := awaitClosed(t, ctx, cf); n != 2 {
		t.Fatalf("engine %d closed, want the idle engine 2", n)
	}
	if n := fdsUnder(t, cf.stateOf(2)); n > 0 {
		t.Errorf("engine 2 was closed but %d files under its state directory are still open", n)
	}
}

// pushSettings sends workspace/didChangeConfiguration with section ioh.
func pushSettings(t *testing.T, f *fixture, ioh map[string]any) {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"settings": map[string]any{"ioh": ioh}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.editor.Notify(f.ctx(), "workspace/didChangeConfiguration", raw); err != nil {
		t.Fatal(err)
	}
}

// awaitClosed returns the number of the next engine closed.
func awaitClosed(t *testing.T, ctx context.Context, cf *countingFactory) int {
	t.Helper()
	select {
	case n := <-cf.closed:
		return n
	case <-ctx.Done():
		t.Fatalf("no engine was closed: %v", ctx.Err())
		return 0
	}
}

// A build that new settings overtake is not kept: it is closed and the
// engine built again with the new settings.
func TestBuildOvertakenBySettingsIsRedone(t *testing.T) {
	state := t.TempDir()
	cf := newCountingFactory(state)
	entered, release := make(chan struct{}), make(chan struct{})
	var settings []string
	var mu sync.Mutex
	build := func(ctx context.Context, s lsp.Session) (*lsp.Engine, error) {
		mu.Lock()
		settings = append(settings, string(s.EditorSettings))
		mu.Unlock()
		return cf.build(ctx, s)
	}
	cf.gate = func(ctx context.Context, n int) error {
		if n != 1 {
			return nil
		}
		close(entered)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f := newFactoryFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{}, build)
	ctx := f.ctx()
	slow := make(chan error, 1)
	go func() {
		_, err := f.editor.ExecuteCommand(ctx, "ioh.runs", nil)
		slow <- err
	}()
	<-entered
	// New settings, then a request: its answer says the settings are in.
	// On a goroutine: a read loop stuck behind the build takes no more.
	answered := make(chan error, 1)
	go func() {
		raw, _ := json.Marshal(map[string]any{"settings": map[string]any{"ioh": map[string]any{"approve": "never"}}})
		if err := f.editor.Notify(ctx, "workspace/didChangeConfiguration", raw); err != nil {
			answered <- err
			return
		}
		_, err := f.editor.CodeActions(ctx, "a.txt", protocol.Range{}, nil)
		answered <- err
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		close(release)
		t.Fatal("new settings were not taken while an engine was being built")
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if n := awaitClosed(t, ctx, cf); n != 1 {
		t.Fatalf("engine %d closed, want the overtaken build 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(settings) != 2 || !strings.Contains(settings[1], `"never"`) {
		t.Errorf("builds saw settings %q, want a second build with the new ones", settings)
	}
}

// Removing the workspace folder replaces the engines: one no run holds is
// closed at once, with every file under its state directory.
func TestRemovedFolderClosesItsIdleEngine(t *testing.T) {
	state := t.TempDir()
	cf := newCountingFactory(state)
	f := newFactoryFixture(t, map[string]string{"a.txt": "x\n"}, lsptest.Config{}, cf.build)
	ctx := f.ctx()
	if _, err := f.editor.ExecuteCommand(ctx, "ioh.runs", nil); err != nil {
		t.Fatal(err)
	}
	if cf.count() != 1 || fdsUnder(t, cf.stateOf(1)) == 0 {
		t.Fatalf("%d engines built, %d files open under the first's state directory; want 1 and some", cf.count(), fdsUnder(t, cf.stateOf(1)))
	}
	raw, err := json.Marshal(map[string]any{"event": map[string]any{
		"added":   []any{},
		"removed": []any{map[string]any{"uri": string(f.editor.URI("")), "name": "root"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.editor.Notify(ctx, "workspace/didChangeWorkspaceFolders", raw); err != nil {
		t.Fatal(err)
	}
	if n := awaitClosed(t, ctx, cf); n != 1 {
		t.Fatalf("engine %d closed, want 1", n)
	}
	if n := fdsUnder(t, cf.stateOf(1)); n > 0 {
		t.Errorf("the removed folder's engine was closed but %d files under its state directory are still open", n)
	}
}
