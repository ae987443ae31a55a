package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRetriesAreStoredAndHonest: a provider that always fails with 500
// under retry.max 2 gets three attempts; the two that are retried are
// `retry` events, printed by run --json and stored in the trace alike
// (they were printed and never stored); the last failure, which nothing
// follows, is the run's error, not a retry.
func TestRetriesAreStoredAndHonest(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error": {"message": "fake failure", "type": "server_error"}}`))
	}))
	defer srv.Close()
	w := newBudgetWorld(t, map[string]string{"t.ioh.yaml": "version: 1\ngoal: retry\nretry: {max: 2, base: 1ms, cap: 2ms}\n"})
	w.userConfig("model:\n  provider: openai-compatible\n  base_url: " + srv.URL + "/v1\n  name: fake\nprices:\n  fake: {input: 1, output: 2}\n")
	code, out, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--json")
	if code != exitProvider {
		t.Fatalf("exit %d, want %d\n%s", code, exitProvider, errOut)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("control: the endpoint got %d requests, want 3 (one attempt and two retries)", n)
	}
	retries := func(lines string) []string {
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
			var e struct {
				Type    string `json:"type"`
				Attempt int    `json:"attempt"`
				Class   string `json:"class"`
			}
			if json.Unmarshal([]byte(l), &e) == nil && e.Type == "retry" {
				got = append(got, e.Class+"#"+string(rune('0'+e.Attempt)))
			}
		}
		return got
	}
	want := "server#1 server#2"
	if got := strings.Join(retries(out), " "); got != want {
		t.Errorf("run --json retries: %q, want %q\n%s", got, want, out)
	}
	_, tr, _ := w.cli("trace", runID(t, errOut), "--json")
	if got := strings.Join(retries(tr), " "); got != want {
		t.Errorf("stored retries: %q, want %q\n%s", got, want, tr)
	}
}
