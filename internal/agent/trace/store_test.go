package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

func openTemp(t *testing.T, secrets ...string) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "t.db")
	s, err := Open(context.Background(), path, secrets)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestStepsCommitAtomicallyAndOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	start := time.Now()
	if err := s.CreateRun(ctx, &RunRow{ID: "r-1", Root: "r-1", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: start}); err != nil {
		t.Fatal(err)
	}
	st := &Step{Run: "r-1", N: 1, Time: start, Messages: json.RawMessage(`[{"role":"assistant"}]`), Usage: json.RawMessage(`{}`),
		CostUSD: 0.5, Changes: []byte("cs1"), State: json.RawMessage(`{"k":1}`), Totals: Totals{Steps: 1, InputTokens: 10, CostUSD: 0.5},
		Events: []event.Event{{Run: "r-1", Step: 1, Type: event.TypeToolCall, Payload: &event.ToolCall{Tool: "read_file"}}}}
	if err := s.CommitStep(ctx, st); err != nil {
		t.Fatal(err)
	}
	// The same step again fails as a whole: no duplicate event, totals kept.
	st.Totals.InputTokens = 999
	if err := s.CommitStep(ctx, st); !errors.Is(err, ErrStepExists) {
		t.Fatalf("second commit: %v, want ErrStepExists", err)
	}
	row, err := s.Run(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(row.Totals, Totals{Steps: 1, InputTokens: 10, CostUSD: 0.5}); diff != "" {
		t.Errorf("totals (-got +want):\n%s", diff)
	}
	if string(row.Changes) != "cs1" || string(row.State) != `{"k":1}` {
		t.Errorf("changes %q state %s", row.Changes, row.State)
	}
	evs, err := s.Events(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Payload.(*event.ToolCall).Tool != "read_file" {
		t.Errorf("events %+v", evs)
	}
	steps, _ := s.Steps(ctx, "r-1")
	if len(steps) != 1 || string(steps[0].Messages) != `[{"role":"assistant"}]` {
		t.Errorf("steps %+v", steps)
	}
	if err := s.SetOutcome(ctx, "r-1", "verified", "sum", "", nil, event.Event{Run: "r-1", Type: event.TypeOutcome, Payload: &event.Outcome{Outcome: "verified"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetOutcome(ctx, "nope", "verified", "", "", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("outcome of a missing run: %v", err)
	}
}

func TestMigrationsAreForwardOnly(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	s.Close()
	// Reopening an up-to-date database is a no-op.
	s2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	s2.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	if v != SchemaVersion {
		t.Errorf("schema %d, want %d", v, SchemaVersion)
	}
	var mode string
	s2.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	var sync int
	s2.db.QueryRow(`PRAGMA synchronous`).Scan(&sync)
	if mode != "wal" || sync != 2 {
		t.Errorf("journal_mode %s synchronous %d, want wal and 2 (FULL)", mode, sync)
	}
	// A database from a newer build is refused, not guessed at.
	s2.db.Exec(`PRAGMA user_version = 99`)
	s2.Close()
	if _, err := Open(ctx, path, nil); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("newer schema: %v", err)
	}
}

func TestLease(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()})
	me := Owner("a")
	other := Owner("b") // same pid: alive
	if err := s.Acquire(ctx, "r", me, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, "r", me, time.Minute); err != nil {
		t.Errorf("re-acquire by the holder: %v", err)
	}
	if err := s.Acquire(ctx, "r", other, time.Minute); !errors.Is(err, ErrLeased) {
		t.Errorf("second owner: %v, want ErrLeased", err)
	}
	if err := s.Renew(ctx, "r", other, time.Minute); !errors.Is(err, ErrLeased) {
		t.Errorf("renew by a non-holder: %v", err)
	}
	// A holder on this host whose process is gone loses the lease at once.
	host, _ := os.Hostname()
	s.db.Exec(`UPDATE runs SET lease_owner = ? WHERE id = 'r'`, host+":999999999:x")
	if err := s.Acquire(ctx, "r", other, time.Minute); err != nil {
		t.Errorf("take over from a dead process: %v", err)
	}
	// An expired lease is free.
	s.db.Exec(`UPDATE runs SET lease_owner = 'elsewhere:1:z', lease_expiry = 1 WHERE id = 'r'`)
	if err := s.Acquire(ctx, "r", me, time.Minute); err != nil {
		t.Errorf("take over an expired lease: %v", err)
	}
	if err := s.Release(ctx, "r", me); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, "r", other, time.Minute); err != nil {
		t.Errorf("acquire after release: %v", err)
	}
	if err := s.Acquire(ctx, "missing", me, time.Minute); !errors.Is(err, ErrNotFound) {
		t.Errorf("lease of a missing run: %v", err)
	}
}

func TestSecretsNeverWritten(t *testing.T) {
	ctx := context.Background()
	const key = "sk-ant-test-0123456789abcdef"
	s, path := openTemp(t, key)
	s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "use " + key, Contract: json.RawMessage(`{"k":"` + key + `"}`), Outcome: "running", FirstStarted: time.Now()})
	s.CommitStep(ctx, &Step{Run: "r", N: 1, Messages: json.RawMessage(`["` + key + `"]`), Usage: json.RawMessage(`{}`),
		Changes: []byte("x" + key), State: json.RawMessage(`{"s":"` + key + `"}`),
		Events: []event.Event{{Run: "r", Type: event.TypeToolResult, Payload: &event.ToolResult{Content: key}}}})
	s.SetOutcome(ctx, "r", "verified", key, key, nil)
	s.Close()
	matches, _ := filepath.Glob(path + "*")
	if len(matches) == 0 {
		t.Fatal("no database files")
	}
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the key", m)
		}
	}
}

func TestStateDir(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"IOH_STATE_DIR": "/s", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/s"},
		{map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/ioh"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/ioh"},
	}
	for _, tt := range tests {
		got, err := StateDir(func(k string) string { return tt.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if got != filepath.FromSlash(tt.want) {
			t.Errorf("%v: %s, want %s", tt.env, got, tt.want)
		}
	}
	if _, err := StateDir(func(string) string { return "" }); err == nil {
		t.Error("no env: want an error")
	}
	if DBPath("/s", "/a/w") == DBPath("/s", "/b/w") {
		t.Error("two workspaces share a database")
	}
}

// The step commit's statements are prepared once per store and reused:
// steps that change the change set and steps that keep it alternate on
// the same store, each with its own events, and every one lands whole.
func TestCommitStepReusesStatements(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if err := s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		changes     []byte
		wantChanges string
		events      int
	}{
		{[]byte("cs1"), "cs1", 2},
		{nil, "cs1", 0},
		{[]byte("cs3"), "cs3", 1},
		{nil, "cs3", 3},
	}
	wantEvents := 0
	for i, tc := range tests {
		n := i + 1
		var evs []event.Event
		for j := 0; j < tc.events; j++ {
			evs = append(evs, event.Event{Run: "r", Step: n, Type: event.TypeToolCall, Payload: &event.ToolCall{ID: fmt.Sprint(j)}})
		}
		wantEvents += tc.events
		st := &Step{Run: "r", N: n, Time: time.Now(), Messages: json.RawMessage(`[]`), Usage: json.RawMessage(`{}`),
			Changes: tc.changes, State: json.RawMessage(`{"n":` + string(rune('0'+n)) + `}`), Totals: Totals{Steps: n}, Events: evs}
		if err := s.CommitStep(ctx, st); err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		row, err := s.Run(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		got := []string{string(row.Changes), string(row.State)}
		want := []string{tc.wantChanges, `{"n":` + string(rune('0'+n)) + `}`}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("step %d changes, state (-got +want):\n%s", n, diff)
		}
		stored, err := s.Events(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != wantEvents {
			t.Errorf("step %d: %d events stored, want %d", n, len(stored), wantEvents)
		}
	}
	steps, err := s.Steps(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(tests) {
		t.Errorf("%d steps stored, want %d", len(steps), len(tests))
	}
}
