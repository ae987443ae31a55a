package trace

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// TestReviewOpenedShowsAwaitingApproval: a live run whose change an
// editor shows (review_opened, no proposal answer after it) is shown as
// awaiting_approval, as `ioh-lsp runs` reads it from another process; the
// answer's proposal event ends that, and a run whose process died shows as
// interrupted whatever it waited for.
func TestReviewOpenedShowsAwaitingApproval(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	if err := s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: OutcomeRunning, FirstStarted: time.Now(),
		LeaseOwner: Owner("a"), LeaseExpiry: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	shown := func(want string) {
		t.Helper()
		r, err := s.Run(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Shown(time.Now()); got != want {
			t.Errorf("shown %q (reviewing %v), want %q", got, r.Reviewing, want)
		}
		rows, err := s.Runs(ctx)
		if err != nil || len(rows) != 1 || rows[0].Shown(time.Now()) != want {
			t.Errorf("Runs: %v, %v; want one run shown %q", rows, err, want)
		}
	}
	shown(OutcomeRunning)
	review := event.New("r", "", 1, &event.ReviewOpened{Files: []string{"a.go"}, Via: "annotated edit"})
	if err := s.AppendEvents(ctx, review); err != nil {
		t.Fatal(err)
	}
	shown(OutcomeAwaitingApproval)
	if err := s.AppendEvents(ctx, event.New("r", "", 1, &event.Proposal{Files: []string{"a.go"}}), event.New("r", "", 1, &event.Approval{Change: true, Answer: "deny"})); err != nil {
		t.Fatal(err)
	}
	shown(OutcomeRunning) // answered: the run goes on (a rebase, a revision)
	if err := s.AppendEvents(ctx, review); err != nil {
		t.Fatal(err)
	}
	shown(OutcomeAwaitingApproval)
	host, _ := os.Hostname()
	s.db.Exec(`UPDATE runs SET lease_owner = ? WHERE id = 'r'`, host+":999999999:x")
	shown(OutcomeInterrupted)
}
