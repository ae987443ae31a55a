package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// fixture is a real server (real harness through internal/wire, replay
// provider, real sandbox adapter, SQLite trace store in a temp state dir)
// on a temp workspace, driven by the fake editor.
type fixture struct {
	t      *testing.T
	dir    string
	state  string
	editor *lsptest.Editor
}

func newFixture(t *testing.T, files map[string]string, cfg lsptest.Config) *fixture {
	t.Helper()
	dir := t.TempDir()
	state := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := lsp.New(lsp.Options{
		Logger:     slog.New(slog.DiscardHandler),
		NewHarness: wireFactory(state),
		Version:    "test",
		StateDir:   filepath.Join(state, "lsp"),
	})
	cfg.Root = dir
	return &fixture{t: t, dir: dir, state: state, editor: lsptest.Start(t, srv, cfg)}
}

// wireFactory builds engines the way `ioh-lsp serve` does, with the state
// directory of the test.
func wireFactory(state string) lsp.HarnessFactory {
	getenv := func(k string) string {
		if k == "IOH_STATE_DIR" {
			return state
		}
		return os.Getenv(k)
	}
	return func(ctx context.Context, s lsp.Session) (*lsp.Engine, error) {
		e, err := wire.NewHarness(ctx, wire.Options{
			Root: s.Root, Getenv: getenv, Environ: func() []string { return nil },
			Approver: s.Approver, Sink: s.Sink, EditorSettings: s.EditorSettings, Logger: s.Logger,
		})
		if err != nil {
			return nil, err
		}
		return &lsp.Engine{Harness: e.Harness, Root: e.Root, Close: e.Close}, nil
	}
}

// call is one recorded tool call of a cassette turn.
type call struct {
	Name string         `json:"name"`
	Args map[string]any `json:"arguments"`
}

// cassette writes a replay cassette (in the workspace) whose turns
// each make the given calls, and returns its path.
func (f *fixture) cassette(turns ...[]call) string {
	f.t.Helper()
	type turn struct {
		Text      string         `json:"text"`
		ToolCalls []call         `json:"tool_calls"`
		Usage     map[string]int `json:"usage"`
	}
	c := struct {
		Version int    `json:"version"`
		Turns   []turn `json:"turns"`
	}{Version: 1}
	for i, calls := range turns {
		c.Turns = append(c.Turns, turn{Text: fmt.Sprintf("turn %d: because the test says so", i+1), ToolCalls: calls, Usage: map[string]int{"input_tokens": 100, "output_tokens": 10}})
	}
	raw, err := json.Marshal(c)
	if err != nil {
		f.t.Fatal(err)
	}
	// Inside the workspace: a cassette an inline contract names must be
	// there (config.PrepareContract).
	p := filepath.Join(f.dir, fmt.Sprintf("cassette-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func edit(path, old, new string) []call {
	return []call{{Name: "edit_file", Args: map[string]any{"path": path, "old": old, "new": new}}}
}

func finish(summary string) []call {
	return []call{{Name: "finish", Args: map[string]any{"summary": summary}}}
}

// inline is an inline contract replaying cassette, with sandboxed checks.
func inline(goal, cassette string, checks ...[]string) map[string]any {
	c := map[string]any{
		"version": 1,
		"goal":    goal,
		"model":   map[string]any{"provider": "replay", "name": "test", "cassette": cassette},
	}
	if len(checks) > 0 {
		var cs []map[string]any
		for i, argv := range checks {
			cs = append(cs, map[string]any{"name": fmt.Sprintf("check%d", i+1), "run": argv})
		}
		c["verify"] = map[string]any{"checks": cs}
	}
	return map[string]any{"inline": c}
}

// testDeadline bounds every fixture test: a server that stops answering
// fails the test with what it was waiting for instead of hanging it.
const testDeadline = 3 * time.Minute

func (f *fixture) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	f.t.Cleanup(cancel)
	return ctx
}

// start executes a command answering {runId}.
func (f *fixture) start(ctx context.Context, cmd string, arg any) string {
	f.t.Helper()
	id, err := f.editor.RunID(ctx, cmd, arg)
	if err != nil {
		f.t.Fatalf("%s: %v", cmd, err)
	}
	return id
}

// awaitEnd waits for the run's end (progress end, or the closing
// showMessage for clients without progress) and returns its message.
func (f *fixture) awaitEnd(ctx context.Context, id string) string {
	f.t.Helper()
	token := "ioh/" + id
	var msg string
	_, err := f.editor.Await(ctx, "end of run "+id, func(s lsptest.State) bool {
		if m, ok := lsptest.ProgressEnded(s, token); ok {
			msg = m
			return true
		}
		for _, m := range s.Messages {
			if strings.Contains(m.Message, "(run "+id+",") {
				msg = m.Message
				return true
			}
		}
		return false
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return msg
}

func (f *fixture) read(rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// runsByID returns ioh.runs keyed by id.
func (f *fixture) runsByID(ctx context.Context) map[string]lsp.RunInfo {
	f.t.Helper()
	raw, err := f.editor.ExecuteCommand(ctx, "ioh.runs", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	var list []lsp.RunInfo
	if err := json.Unmarshal(raw, &list); err != nil {
		f.t.Fatalf("ioh.runs answered %s: %v", raw, err)
	}
	out := map[string]lsp.RunInfo{}
	for _, r := range list {
		out[r.RunID] = r
	}
	return out
}

type lspServer = lsp.Server

func newWireServer(state string) *lsp.Server {
	return lsp.New(lsp.Options{
		Logger:     slog.New(slog.DiscardHandler),
		NewHarness: wireFactory(state),
		Version:    "test",
		StateDir:   filepath.Join(state, "lsp"),
	})
}
