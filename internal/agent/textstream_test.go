package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
)

// streamer is a provider that streams its turn's text in the given
// pieces; with failFirst, its first call streams half of them, reports a
// retry and streams them all again.
type streamer struct {
	mu        sync.Mutex
	pieces    []string
	failFirst bool
	report    RetryReporter
	calls     int
}

func (s *streamer) Name() string { return "streamer" }

func (s *streamer) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	s.mu.Lock()
	s.calls++
	first := s.calls == 1
	s.mu.Unlock()
	if !first {
		return say(10, "finish", args{"summary": "done"}).resp, nil
	}
	if s.failFirst {
		for _, p := range s.pieces[:len(s.pieces)/2] {
			model.EmitTextDelta(ctx, p)
		}
		s.report(RetryEvent{Provider: "streamer", Attempt: 2, Class: model.ClassTransport, Err: "connection reset"})
	}
	for _, p := range s.pieces {
		model.EmitTextDelta(ctx, p)
	}
	r := say(10, "read_file", args{"path": "a.txt"}).resp
	r.Text = strings.Join(s.pieces, "")
	return r, nil
}

func streamRun(t *testing.T, prov *streamer, secrets []string) (*fixture, []event.Event) {
	t.Helper()
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, nil)
	h, err := New(Options{
		Root: f.root, Store: f.store, Approver: f.appr, Events: f.sink, Sandbox: copySandbox{t}, Secrets: secrets,
		Providers: func(_ *contract.Contract, rep RetryReporter) (model.Provider, error) {
			prov.report = rep
			return prov, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	res := f.run(t, goal("read a.txt"))
	f.sink.mu.Lock()
	defer f.sink.mu.Unlock()
	_ = res
	return f, append([]event.Event(nil), f.sink.ev...)
}

// The text a provider streams reaches the sink as text_delta events of the
// step, in order, adding up to the step's model_turn text; none is stored.
func TestTextDeltasStreamAndAreNotStored(t *testing.T) {
	prov := &streamer{pieces: []string{"I will ", "read ", "a.txt ", "first."}}
	f, evs := streamRun(t, prov, nil)
	var got []string
	var turn string
	var run string
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case *event.TextDelta:
			if e.Step != 1 || p.Attempt != 1 {
				t.Errorf("delta %q in step %d attempt %d, want step 1 attempt 1", p.Text, e.Step, p.Attempt)
			}
			if turn != "" {
				t.Errorf("delta %q after the model_turn", p.Text)
			}
			got = append(got, p.Text)
			run = e.Run
		case *event.ModelTurn:
			if turn == "" {
				turn = p.Text
			}
		}
	}
	if strings.Join(got, "|") != strings.Join(prov.pieces, "|") {
		t.Errorf("deltas %q, want %q", got, prov.pieces)
	}
	if strings.Join(got, "") != turn {
		t.Errorf("deltas add up to %q, the model_turn says %q", strings.Join(got, ""), turn)
	}
	stored, err := f.store.Events(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range stored {
		if e.Type == event.TypeTextDelta {
			t.Errorf("a text_delta was stored: %+v", e)
		}
	}
}

// A secret split across two pieces never leaves whole or in part: the
// piece that may start it is held back until the next one completes it.
func TestTextDeltasRedactASplitSecret(t *testing.T) {
	secret := "sk-test-0123456789abcdef"
	prov := &streamer{pieces: []string{"the key is sk-te", "st-01234", "56789abcdef, done"}}
	_, evs := streamRun(t, prov, []string{secret})
	var all []string
	for _, e := range evs {
		if p, ok := e.Payload.(*event.TextDelta); ok {
			all = append(all, p.Text)
			for n := 4; n <= len(secret); n++ {
				if strings.Contains(p.Text, secret[:n]) {
					t.Errorf("delta %q holds %q of the secret", p.Text, secret[:n])
				}
			}
		}
	}
	if got, want := strings.Join(all, ""), "the key is "+redact.Redacted+", done"; got != want {
		t.Errorf("deltas add up to %q, want %q", got, want)
	}
}

// A retried call's pieces are numbered by attempt, and the retry comes
// between the attempts.
func TestTextDeltasOfARetryAreNumbered(t *testing.T) {
	prov := &streamer{pieces: []string{"one ", "two ", "three ", "four"}, failFirst: true}
	_, evs := streamRun(t, prov, nil)
	var seq []string
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case *event.TextDelta:
			seq = append(seq, strings.TrimSpace(p.Text)+"@"+string(rune('0'+p.Attempt)))
		case *event.Retry:
			seq = append(seq, "retry")
		}
	}
	want := "one@1 two@1 retry one@2 two@2 three@2 four@2"
	if got := strings.Join(seq, " "); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// Each check run is announced by a transient check_started event before
// its verification event, red phase first; none is stored.
func TestCheckStartedComesBeforeEachCheck(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello world\n"}, map[string][]turn{"": {
		say(100, "edit_file", args{"path": "a.txt", "old": "world", "new": "there"}),
		say(300, "finish", args{"summary": "greeted"}),
	}})
	c := goal("greet")
	c.Verify.RedGreen = true
	c.Verify.Checks = []contract.Check{{Name: "grep", Run: []string{"grep", "-q", "there", "a.txt"}}}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v), want applied", res.Outcome, res.Err)
	}
	var seq []string
	f.sink.mu.Lock()
	for _, e := range f.sink.ev {
		switch p := e.Payload.(type) {
		case *event.CheckStarted:
			seq = append(seq, "start "+p.Phase+":"+p.Check)
		case *event.CheckRun:
			seq = append(seq, "ran "+p.Phase+":"+p.Check)
		}
	}
	f.sink.mu.Unlock()
	if got, want := strings.Join(seq, ", "), "start red:grep, ran red:grep, start green:grep, ran green:grep"; got != want {
		t.Errorf("events: %s, want %s", got, want)
	}
	stored, err := f.store.Events(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range stored {
		if event.Transient(e.Type) {
			t.Errorf("a transient event was stored: %+v", e)
		}
	}
}
