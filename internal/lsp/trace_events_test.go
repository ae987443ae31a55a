package lsp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lsptest"
)

// patchAndSubAgentCassette: step 1 patches calc.go with apply_patch,
// step 2 hands notes.txt to a sub-agent (which edits it), step 3
// finishes. Each turn's text is its reason.
const patchAndSubAgentCassette = `{"version": 1, "turns": [
 {"text": "patching Add", "tool_calls": [{"name": "apply_patch", "arguments": {"patch": "--- a/calc.go\n+++ b/calc.go\n@@ -3 +3 @@\n-func Add(a, b int) int { return a - b }\n+func Add(a, b int) int { return a + b }\n"}}], "usage": {"input_tokens": 100, "output_tokens": 10}},
 {"text": "delegating the notes", "tool_calls": [{"name": "spawn_agent", "arguments": {"goal": "notes"}}], "usage": {"input_tokens": 100, "output_tokens": 10}},
 {"text": "done", "tool_calls": [{"name": "finish", "arguments": {"summary": "fixed Add, noted it"}}], "usage": {"input_tokens": 100, "output_tokens": 10}}
], "children": {"notes": [
 {"text": "noting", "tool_calls": [{"name": "edit_file", "arguments": {"path": "notes.txt", "old": "old", "new": "Add adds"}}], "usage": {"input_tokens": 50, "output_tokens": 5}},
 {"text": "noted", "tool_calls": [{"name": "finish", "arguments": {"summary": "noted"}}], "usage": {"input_tokens": 50, "output_tokens": 5}}
]}}`

// runPatchAndSubAgent runs the cassette above to an applied change.
func runPatchAndSubAgent(t *testing.T) (*fixture, context.Context, string) {
	f := newFixture(t, map[string]string{
		"calc.go":   "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"notes.txt": "old\n",
	}, lsptest.Config{})
	ctx := f.ctx()
	cas := filepath.Join(f.dir, "cassette.json")
	if err := os.WriteFile(cas, []byte(patchAndSubAgentCassette), 0o644); err != nil {
		t.Fatal(err)
	}
	id := f.start(ctx, "ioh.run", inline("fix Add and note it", cas))
	if end := f.awaitEnd(ctx, id); !strings.HasPrefix(end, "completed: applied") {
		t.Fatalf("run ended %q, want completed: applied", end)
	}
	if got := f.read("calc.go"); !strings.Contains(got, "a + b") {
		t.Fatalf("calc.go = %q", got)
	}
	if got := f.read("notes.txt"); got != "Add adds\n" {
		t.Fatalf("notes.txt = %q", got)
	}
	return f, ctx, id
}

// The Information at each applied hunk names the step that wrote it: a
// file apply_patch changed is step 1's apply_patch, one a sub-agent
// changed is step 2's spawn_agent, each with its step's reason. (They
// were "run r-…: modify": the server searched a 2,000-byte preview of
// the call's arguments for the quoted path, which a patch or a sub-agent
// never holds; it now reads the paths the call's tool_result records it
// wrote.)
func TestEditDiagnosticsNameTheStepThatWrote(t *testing.T) {
	f, ctx, id := runPatchAndSubAgent(t)
	want := map[string]string{
		"calc.go":   fmt.Sprintf("run %s, step 1: apply_patch — patching Add", id),
		"notes.txt": fmt.Sprintf("run %s, step 2: spawn_agent — delegating the notes", id),
	}
	for file, msg := range want {
		uri := f.editor.URI(file)
		var got []protocol.Diagnostic
		if _, err := f.editor.Await(ctx, "edit diagnostic on "+file, func(s lsptest.State) bool {
			got = s.Diagnostics[uri]
			return len(got) > 0
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || fmt.Sprint(got[0].Message) != msg || got[0].Severity != protocol.DiagnosticSeverityInformation {
			t.Errorf("%s diagnostics %+v, want one Information %q", file, got, msg)
		}
	}
}

// ioh.runs: a sub-agent is listed with its own end once it ended (it
// stayed "running" for the rest of the session, its parent long
// applied), and the parent with its own.
func TestSubAgentIsNotRunningAfterItsParentEnds(t *testing.T) {
	f, ctx, id := runPatchAndSubAgent(t)
	runs := f.runsByID(ctx)
	if r := runs[id]; r.Outcome != "applied" {
		t.Errorf("parent %+v, want applied", r)
	}
	var children int
	for rid, r := range runs {
		if rid == id {
			continue
		}
		children++
		if r.Goal != "notes" || r.Outcome != "unverified" {
			t.Errorf("sub-agent %s: %+v, want goal notes, outcome unverified (its own end, as `ioh-lsp runs` shows it)", rid, r)
		}
	}
	if children != 1 {
		t.Errorf("ioh.runs lists %d sub-agents, want 1: %+v", children, runs)
	}
}
