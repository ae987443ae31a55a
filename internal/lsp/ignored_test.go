package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// TestIgnoredSettingMarksTheTaskFileLine: in a workspace the user config
// does not trust, a task file's `model: {provider: anthropic, name: x}`
// is ignored when its run starts; the server puts a Warning
// setting-ignored on that line (line 3) whose message names the fix
// (`trusted:`). The control: a task file without it gets none. Starting
// the file again without the setting clears the warning; editing the
// marked line removes it too.
func TestIgnoredSettingMarksTheTaskFileLine(t *testing.T) {
	mine, _ := countingEndpoint(t)
	user := "model: {provider: openai-compatible, name: m, base_url: " + mine.URL + "/v1, api_key_env: MINE_API_KEY}\nprices: {m: {input: 1, output: 1}}\n"
	f := settingsFixture(t, user, nil)
	ctx := deadline(t)
	const chooses = "version: 1\ngoal: greet\nmodel: {provider: anthropic, name: x}\n"
	const plain = "version: 1\ngoal: greet\n"
	task, other := filepath.Join(f.dir, "greet.ioh.yaml"), filepath.Join(f.dir, "plain.ioh.yaml")
	writeFile(t, task, chooses)
	writeFile(t, other, plain)
	run := func(name string) {
		t.Helper()
		id, err := f.editor.RunID(ctx, "ioh.run", map[string]string{"contract": string(f.editor.URI(name))})
		if err != nil {
			t.Fatalf("ioh.run %s: %v", name, err)
		}
		f.awaitEnd(ctx, id)
	}
	u := f.editor.URI("greet.ioh.yaml")
	ignored := func(s lsptest.State) []protocol.Diagnostic {
		var out []protocol.Diagnostic
		for _, d := range s.Diagnostics[u] {
			if d.Code == protocol.String("setting-ignored") {
				out = append(out, d)
			}
		}
		return out
	}

	run("greet.ioh.yaml")
	st, err := f.editor.Await(ctx, "the ignored provider marked", func(s lsptest.State) bool { return len(ignored(s)) > 0 })
	if err != nil {
		t.Fatal(err)
	}
	var provider bool
	for _, d := range ignored(st) {
		msg := string(d.Message.(protocol.String))
		if d.Range.Start.Line != 2 || d.Severity != protocol.DiagnosticSeverityWarning {
			t.Errorf("diagnostic %+v, want a Warning on line 3", d)
		}
		provider = provider || strings.Contains(msg, "model.provider ignored") && strings.Contains(msg, "`trusted:`")
	}
	if !provider {
		t.Errorf("no diagnostic names model.provider and the fix `trusted:`: %+v", ignored(st))
	}

	run("plain.ioh.yaml")
	if ds := f.editor.Snapshot().Diagnostics[f.editor.URI("plain.ioh.yaml")]; len(ds) != 0 {
		t.Errorf("a task file that sets nothing ignored got diagnostics: %+v", ds)
	}

	writeFile(t, task, plain)
	run("greet.ioh.yaml")
	if _, err := f.editor.Await(ctx, "the warning cleared by a start without it", func(s lsptest.State) bool { return len(ignored(s)) == 0 }); err != nil {
		t.Fatal(err)
	}

	writeFile(t, task, chooses)
	run("greet.ioh.yaml")
	if _, err := f.editor.Await(ctx, "the ignored provider marked again", func(s lsptest.State) bool { return len(ignored(s)) > 0 }); err != nil {
		t.Fatal(err)
	}
	if err := f.editor.OpenFile(ctx, "greet.ioh.yaml"); err != nil {
		t.Fatal(err)
	}
	line := protocol.Range{Start: protocol.Position{Line: 2, Character: 0}, End: protocol.Position{Line: 3, Character: 0}}
	if err := f.editor.EditFile(ctx, "greet.ioh.yaml", protocol.TextEdit{Range: line, NewText: "model: {name: x}\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.editor.Await(ctx, "the warning gone once its line changed", func(s lsptest.State) bool { return len(ignored(s)) == 0 }); err != nil {
		t.Fatal(err)
	}
}
