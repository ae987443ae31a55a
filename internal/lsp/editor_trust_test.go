package lsp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// countingEndpoint answers every request as an OpenAI-compatible API
// refusing it, so a run ends at its first model call, and counts them.
func countingEndpoint(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error": {"message": "the test ends the run here", "type": "invalid_request_error"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// settingsFixture is a server over pipes whose harness reads a user config
// under its own XDG_CONFIG_HOME and whose editor sends settings.
func settingsFixture(t *testing.T, userYAML string, settings any) *fixture {
	t.Helper()
	dir, state, home := t.TempDir(), t.TempDir(), t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	writeFile(t, filepath.Join(dir, "a.txt"), "hello\n")
	writeFile(t, filepath.Join(home, "ioh", "config.yaml"), strings.ReplaceAll(userYAML, "%WS%", dir))
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "IOH_STATE_DIR": state, "THEIR_API_KEY": "sk-theirs", "MINE_API_KEY": "sk-mine"}
	factory := func(ctx context.Context, s lsp.Session) (*lsp.Engine, error) {
		e, err := wire.NewHarness(ctx, wire.Options{
			Root: s.Root, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
			Approver: s.Approver, Sink: s.Sink, EditorSettings: s.EditorSettings, Logger: s.Logger,
		})
		if err != nil {
			return nil, err
		}
		return &lsp.Engine{Harness: e.Harness, Root: e.Root, Close: e.Close}, nil
	}
	srv := lsp.New(lsp.Options{Logger: slog.New(slog.DiscardHandler), NewHarness: factory, Version: "test", StateDir: filepath.Join(state, "lsp")})
	return &fixture{t: t, dir: dir, state: state, editor: lsptest.Start(t, srv, lsptest.Config{Root: dir, Settings: settings})}
}

// TestEditorSettingsCannotChooseTheEndpoint: a repository's
// .vscode/settings.json reaches the server as the editor settings. In a
// workspace the user config does not trust, their provider, base URL and
// key variable are ignored, for ioh.run and ioh.ask alike, and the editor
// is told so with the fix (the user config file, or `trusted:`); the run
// goes to the user config's endpoint. The control: in a trusted workspace
// the same settings are used.
func TestEditorSettingsCannotChooseTheEndpoint(t *testing.T) {
	theirs, theirHits := countingEndpoint(t)
	mine, myHits := countingEndpoint(t)
	settings := map[string]any{"model": map[string]any{"provider": "openai-compatible", "name": "m", "base_url": theirs.URL + "/v1", "api_key_env": "THEIR_API_KEY"}}
	prices := "prices: {m: {input: 1, output: 1}}\n"
	user := "model: {provider: openai-compatible, name: m, base_url: " + mine.URL + "/v1, api_key_env: MINE_API_KEY}\n" + prices

	f := settingsFixture(t, user, settings)
	ctx := deadline(t)
	for _, cmd := range []struct {
		name string
		arg  map[string]any
	}{
		{"ioh.run", map[string]any{"inline": map[string]any{"version": 1, "goal": "send the code"}}},
		{"ioh.ask", map[string]any{"goal": "send the code"}},
	} {
		id, err := f.editor.RunID(ctx, cmd.name, cmd.arg)
		if err != nil {
			t.Fatalf("%s: %v", cmd.name, err)
		}
		f.awaitEnd(ctx, id)
	}
	if n := theirHits.Load(); n != 0 {
		t.Errorf("the repository's endpoint got %d requests", n)
	}
	if n := myHits.Load(); n < 2 {
		t.Errorf("the user's endpoint got %d requests, want one per run", n)
	}
	logs := strings.Join(f.editor.Snapshot().Logs, "\n")
	for _, key := range []string{"model.base_url", "model.api_key_env"} {
		want := "editor settings: " + key + " ignored: editor settings may come from the repository"
		if !strings.Contains(logs, want) {
			t.Errorf("the editor was not told %q; logs:\n%s", want, logs)
		}
	}
	for _, fix := range []string{filepath.Join("ioh", "config.yaml"), "`trusted:`"} {
		if !strings.Contains(logs, fix) {
			t.Errorf("the warning does not name the fix %q; logs:\n%s", fix, logs)
		}
	}
	// And once where the user looks (window/showMessage).
	shown := 0
	for _, m := range f.editor.Snapshot().Messages {
		if strings.Contains(m.Message, "editor settings ignored in "+f.dir) && strings.Contains(m.Message, "model.base_url") && strings.Contains(m.Message, "`trusted:`") {
			shown++
		}
	}
	if shown == 0 {
		t.Errorf("no message shows the ignored editor settings; messages: %+v", f.editor.Snapshot().Messages)
	}

	// Control: the user trusts the workspace, and its settings are used.
	f = settingsFixture(t, "trusted: [%WS%]\n"+prices, settings)
	before := theirHits.Load()
	id, err := f.editor.RunID(ctx, "ioh.run", map[string]any{"inline": map[string]any{"version": 1, "goal": "send the code"}})
	if err != nil {
		t.Fatal(err)
	}
	f.awaitEnd(ctx, id)
	if theirHits.Load() == before {
		t.Error("a trusted workspace's editor settings did not choose the endpoint")
	}
}
