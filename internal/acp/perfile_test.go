package acp

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// workspaceTwoFiles is a workspace with a.txt and b.txt, a task whose
// check greps both fixes, and a cassette that edits both and finishes.
func workspaceTwoFiles(t *testing.T) (ws, task, cassette string) {
	t.Helper()
	ws = t.TempDir()
	task = filepath.Join(ws, "fix.ioh.yaml")
	cassette = filepath.Join(t.TempDir(), "cassette.json")
	files := map[string]string{
		filepath.Join(ws, "a.txt"): "alpha old\n",
		filepath.Join(ws, "b.txt"): "beta old\n",
		task:                       "version: 1\ngoal: Fix both\nverify:\n  checks:\n    - { name: both, run: [\"grep\", \"-q\", \"new\", \"a.txt\", \"b.txt\"] }\n",
		cassette: `{"version":1,"turns":[
 {"tool_calls":[{"name":"edit_file","arguments":{"path":"a.txt","old":"alpha old","new":"alpha new"}}],"usage":{"input_tokens":100,"output_tokens":10}},
 {"tool_calls":[{"name":"edit_file","arguments":{"path":"b.txt","old":"beta old","new":"beta new"}}],"usage":{"input_tokens":100,"output_tokens":10}},
 {"tool_calls":[{"name":"finish","arguments":{"summary":"fixed both"}}],"usage":{"input_tokens":100,"output_tokens":10}}]}`,
	}
	writeFiles(t, files)
	return ws, task, cassette
}

// TestChooseFilesWritesOnlyTheAccepted: the two-file change offers
// "Choose files…"; a.txt accepted and b.txt rejected writes a.txt only,
// the trace's partial_apply lists a.txt applied and b.txt dropped, and
// /undo puts back a.txt alone.
func TestChooseFilesWritesOnlyTheAccepted(t *testing.T) {
	ws, task, cassette := workspaceTwoFiles(t)
	var mu sync.Mutex
	var titles []string
	var offered bool
	c := newClient(t, cassette, func(p map[string]any) any {
		tc := p["toolCall"].(map[string]any)
		title, _ := tc["title"].(string)
		mu.Lock()
		defer mu.Unlock()
		titles = append(titles, title)
		switch {
		case strings.HasPrefix(title, "Write the change to 2 file(s)"):
			for _, o := range p["options"].([]any) {
				if o.(map[string]any)["optionId"] == optChoose {
					offered = true
					return selected(optChoose)
				}
			}
			return selected(optRejectOnce)
		case strings.HasPrefix(title, "Apply a.txt?"):
			return selected(optAllowOnce)
		}
		return selected(optRejectOnce)
	})
	sid := openSession(t, c, ws)
	if got := result(t, c.call(methodSessionPrompt, taskPrompt(sid, task)))["stopReason"]; got != stopEndTurn {
		t.Fatalf("stop reason %v", got)
	}
	mu.Lock()
	if !offered || len(titles) != 3 {
		t.Fatalf("offered %v, asked %q", offered, titles)
	}
	mu.Unlock()
	a, b := filepath.Join(ws, "a.txt"), filepath.Join(ws, "b.txt")
	if got := readFile(t, a); got != "alpha new\n" {
		t.Errorf("the accepted a.txt: %q", got)
	}
	if got := readFile(t, b); got != "beta old\n" {
		t.Errorf("the rejected b.txt was written: %q", got)
	}
	c.mu.Lock()
	store := c.store
	c.mu.Unlock()
	rows, err := store.Runs(context.Background())
	if err != nil || len(rows) != 1 {
		t.Fatalf("runs: %v %v", rows, err)
	}
	if rows[0].Outcome != "applied" {
		t.Errorf("the run's outcome is %q, want applied", rows[0].Outcome)
	}
	events, err := store.TreeEvents(context.Background(), rows[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var partial *event.PartialApply
	for _, e := range events {
		if p, ok := e.Payload.(*event.PartialApply); ok {
			partial = p
		}
	}
	if partial == nil || len(partial.Files) != 2 ||
		partial.Files[0].Path != "a.txt" || len(partial.Files[0].Applied) != 1 || len(partial.Files[0].Dropped) != 0 ||
		partial.Files[1].Path != "b.txt" || len(partial.Files[1].Applied) != 0 || len(partial.Files[1].Dropped) != 1 {
		t.Fatalf("partial_apply: %+v", partial)
	}
	from := len(c.updates())
	c.call(methodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "/undo"}}})
	out := messagesSince(c.updates(), from)
	if !strings.Contains(out, "a.txt") || strings.Contains(out, "b.txt") {
		t.Errorf("/undo: %s", out)
	}
	if got := readFile(t, a); got != "alpha old\n" {
		t.Errorf("a.txt after /undo: %q", got)
	}
	if got := readFile(t, b); got != "beta old\n" {
		t.Errorf("b.txt after /undo: %q", got)
	}
}

// TestChooseFilesRejectingEveryFileDiscards: leaving both files as they
// are discards the change: nothing is written and the run is rejected.
func TestChooseFilesRejectingEveryFileDiscards(t *testing.T) {
	ws, task, cassette := workspaceTwoFiles(t)
	c := newClient(t, cassette, func(p map[string]any) any {
		if strings.HasSuffix(p["toolCall"].(map[string]any)["toolCallId"].(string), "/change") {
			return selected(optChoose)
		}
		return selected(optRejectOnce)
	})
	sid := openSession(t, c, ws)
	c.call(methodSessionPrompt, taskPrompt(sid, task))
	if a, b := readFile(t, filepath.Join(ws, "a.txt")), readFile(t, filepath.Join(ws, "b.txt")); a != "alpha old\n" || b != "beta old\n" {
		t.Errorf("rejecting every file wrote: a.txt %q, b.txt %q", a, b)
	}
	c.mu.Lock()
	store := c.store
	c.mu.Unlock()
	rows, err := store.Runs(context.Background())
	if err != nil || len(rows) != 1 || rows[0].Outcome != "rejected" {
		t.Fatalf("runs: %+v %v", rows, err)
	}
}
