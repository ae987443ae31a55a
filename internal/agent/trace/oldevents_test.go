package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// oldEvents reads package event's testdata/events-v1.jsonl: events as the
// map-based encoder of the previous version stored them.
func oldEvents(t *testing.T) [][]byte {
	t.Helper()
	data, err := os.ReadFile("../event/testdata/events-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			out = append(out, line)
		}
	}
	return out
}

// A trace database written by the previous version reads back typed
// through the store: its event rows (bodies as that version stored
// them) come out of Store.Events with their payloads, and print again
// byte for byte, as `ioh-lsp trace --json` prints them.
func TestOldTraceDatabaseReadsTyped(t *testing.T) {
	ctx := t.Context()
	s, _ := openTemp(t)
	if err := s.CreateRun(ctx, &RunRow{ID: "r-1a2b3c", Root: "r-1a2b3c", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "applied", FirstStarted: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for _, line := range oldEvents(t) {
		var frame struct {
			Run  string `json:"run"`
			Step int    `json:"step"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &frame); err != nil {
			t.Fatal(err)
		}
		if frame.Run != "r-1a2b3c" {
			continue // a sub-agent's: another run
		}
		if _, err := s.db.ExecContext(ctx, `INSERT INTO events (run, step, type, time, body) VALUES (?, ?, ?, ?, ?)`,
			frame.Run, frame.Step, frame.Type, time.Now().UnixNano(), string(line)); err != nil {
			t.Fatal(err)
		}
		want = append(want, line)
	}
	evs, err := s.Events(ctx, "r-1a2b3c")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events read back, want %d", len(evs), len(want))
	}
	typed := 0
	for i, e := range evs {
		if e.Payload != nil {
			typed++
		}
		got, err := json.Marshal(e)
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Errorf("event %d printed as\n %s (%v)\nwant\n %s", i, got, err, want[i])
		}
	}
	if typed != len(evs)-1 { // all but the type from the future
		t.Errorf("%d of %d events typed", typed, len(evs))
	}
}
