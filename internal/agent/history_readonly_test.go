package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// TestOpenHistoryReadsOnly: a history opened for reading (`ioh-lsp runs`)
// opens the store read-only, on a real SQLite file: it reads while
// another connection holds the write lock, leaves the file's mode as it
// found it, and a write through it fails. A run whose stored state does
// not decode is listed with an error that names it and what to do, not
// shown as if its state were empty.
func TestOpenHistoryReadsOnly(t *testing.T) {
	ctx := context.Background()
	stateDir, root := t.TempDir(), t.TempDir()
	path := trace.DBPath(stateDir, root)
	w, err := trace.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, r := range []*trace.RunRow{
		{ID: "r-good", Root: "r-good", Goal: "good", Outcome: "done", FirstStarted: now, State: json.RawMessage(`{}`)},
		{ID: "r-bad", Root: "r-bad", Goal: "bad", Outcome: "done", FirstStarted: now, State: json.RawMessage(`{"phase": [`)},
	} {
		if err := w.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}

	// Another process writes: it holds the write lock while we read.
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET goal = 'being written' WHERE id = 'r-good'`); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hs, err := OpenHistory(rctx, stateDir, root)
	if err != nil {
		t.Fatalf("open for reading beside a writer: %v", err)
	}
	defer hs.Close()
	runs, err := hs.Runs(rctx)
	if err != nil {
		t.Fatalf("read beside a writer: %v", err)
	}
	tx.Rollback()
	got := map[string]*StoredRun{}
	for _, r := range runs {
		got[r.RunID] = r
	}
	if len(runs) != 2 || got["r-good"] == nil || got["r-bad"] == nil {
		t.Fatalf("runs %+v, want r-good and r-bad", runs)
	}
	if got["r-good"].StateErr != nil {
		t.Errorf("r-good: %v", got["r-good"].StateErr)
	}
	if e := got["r-bad"].StateErr; e == nil || !strings.Contains(e.Error(), "r-bad") || !strings.Contains(e.Error(), "ioh-lsp run") {
		t.Errorf("r-bad's undecodable state: %v, want an error naming the run and the fix", e)
	}

	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the reader changed the file: %v %v", fi.Mode(), err)
	}
	if err := hs.store.CreateRun(ctx, &trace.RunRow{ID: "r-new", Root: "r-new", FirstStarted: now}); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a write through the reader: %v, want SQLite's read-only error", err)
	}
}
