package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/openai"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
)

// The conversation tests drive the real OpenAI-compatible adapter
// against an httptest server speaking the chat-completions stream, and
// read what the model received from the request bodies.

// oaMsg is one message of a chat-completions request as it was sent.
type oaMsg struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatServer answers each request with the scripted tool call picked by
// how many assistant messages the request holds (stateless, like a
// cassette: a conversation's turns continue the count), and keeps every
// request's messages.
type chatServer struct {
	mu    sync.Mutex
	turns []chatTurn
	reqs  [][]oaMsg
	srv   *httptest.Server
	// block, when set, holds each request until it is closed.
	block chan struct{}
}

type chatTurn struct {
	tool string
	args map[string]any
}

func turnCall(tool string, a map[string]any) chatTurn { return chatTurn{tool, a} }

func newChatServer(t *testing.T, turns ...chatTurn) *chatServer {
	t.Helper()
	cs := &chatServer{turns: turns}
	cs.srv = httptest.NewServer(http.HandlerFunc(cs.serve))
	t.Cleanup(cs.srv.Close)
	return cs
}

func (cs *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []oaMsg `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	cs.mu.Lock()
	cs.reqs = append(cs.reqs, req.Messages)
	block := cs.block
	cs.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-r.Context().Done():
			return
		}
	}
	if n >= len(cs.turns) {
		http.Error(w, `{"error":{"message":"no scripted turn","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	t := cs.turns[n]
	args, _ := json.Marshal(t.args)
	delta, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
		"function": map[string]any{"name": t.tool, "arguments": string(args)}}}})
	w.Header().Set("Content-Type", "text/event-stream")
	head := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"test-model",`
	for _, c := range []string{
		head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`,
		head + `"choices":[{"index":0,"delta":` + string(delta) + `,"finish_reason":null}],"usage":null}`,
		head + `"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`,
		head + `"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}`,
		`[DONE]`,
	} {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
}

func (cs *chatServer) requests() [][]oaMsg {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([][]oaMsg(nil), cs.reqs...)
}

// sent renders a request as the model reads it, one message a line.
func sent(msgs []oaMsg) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "[%s] %s", m.Role, m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, " call %s %s", c.Function.Name, c.Function.Arguments)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// chatFixture is a fixture whose harness calls the chat server.
func chatFixture(t *testing.T, files map[string]string, cs *chatServer) *fixture {
	t.Helper()
	f := newFixture(t, files, nil)
	f.h = f.chatHarness(t, cs)
	return f
}

func (f *fixture) chatHarness(t *testing.T, cs *chatServer) *Harness {
	t.Helper()
	h, err := New(Options{
		Root: f.root, Store: f.store, Approver: f.appr, Events: f.sink, Sandbox: copySandbox{t},
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) {
			return openai.New(openai.Config{Kind: "openai-compatible", BaseURL: cs.srv.URL + "/v1", Model: "test-model", HTTPClient: cs.srv.Client()}), nil
		},
		Cost: func(_, _ string, u model.Usage) (float64, model.CostSource) {
			return float64(u.InputTokens)*1e-6 + float64(u.OutputTokens)*5e-6, model.CostTable
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// follow sends a follow-up and waits for the run it goes to.
func (f *fixture) follow(t *testing.T, id, text string) *Result {
	t.Helper()
	r, err := f.h.Continue(context.Background(), id, text)
	if err != nil {
		t.Fatalf("Continue(%s): %v", id, err)
	}
	return r.Wait()
}

// turns returns the user_turn events stored for run id.
func (f *fixture) turns(t *testing.T, id string) []*event.UserTurn {
	t.Helper()
	evs, err := f.store.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []*event.UserTurn
	for _, e := range evs {
		if e.Type == event.TypeUserTurn {
			u, ok := e.Payload.(*event.UserTurn)
			if !ok {
				var p event.UserTurn
				b, _ := json.Marshal(e)
				json.Unmarshal(b, &p)
				u = &p
			}
			out = append(out, u)
		}
	}
	return out
}

// inOrder fails unless each of parts occurs in s, each after the one
// before.
func inOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			t.Errorf("the second turn's request lacks %q (after byte %d) in:\n%s", p, at, s)
			return
		}
		at += i + len(p)
	}
}

const wholeCheck = `grep -q one a.txt && test ! -e b.txt -o "$(cat b.txt)" = two`

func checked(g string, steps int) *contract.Contract {
	c := goal(g)
	c.Budget.Steps = steps
	c.Verify.Checks = []contract.Check{{Name: "whole", Shell: wholeCheck}}
	return c
}

// A follow-up on a change awaiting approval continues the same run: the
// model gets the first turn (its goal, its tool results, the finish
// verdict), the statement that the change is still pending, then the new
// text; its edit adds to the change set, the checks run on the whole
// change and approving applies both files. The turn gets the contract's
// step budget afresh (3 steps, all spent by the first turn).
func TestFollowUpOnPendingChange(t *testing.T) {
	cs := newChatServer(t,
		turnCall("read_file", args{"path": "a.txt"}),
		turnCall("write_file", args{"path": "a.txt", "content": "one\n"}),
		turnCall("finish", args{"summary": "wrote one"}),
		turnCall("write_file", args{"path": "b.txt", "content": "two\n"}),
		turnCall("finish", args{"summary": "wrote two as well"}),
	)
	f := chatFixture(t, map[string]string{"a.txt": "hello-original\n"}, cs)
	f.appr.change = Decision{Answer: Defer}
	res := f.run(t, checked("write one into a.txt", 3))
	if res.Outcome != OutcomeAwaitingApproval || !res.Pending {
		t.Fatalf("first turn: %s (%v), want a pending change", res.Outcome, res.Err)
	}
	f.appr.change = Decision{Answer: AllowOnce}
	before := len(cs.requests())
	got := f.follow(t, res.RunID, "Now also write two into b.txt")
	if got.RunID != res.RunID {
		t.Errorf("the follow-up went to %s, want the same run %s", got.RunID, res.RunID)
	}
	if got.Outcome != OutcomeApplied {
		t.Fatalf("follow-up: %s (%v), want applied", got.Outcome, got.Err)
	}
	if a, b := f.read(t, "a.txt"), f.read(t, "b.txt"); a != "one\n" || b != "two\n" {
		t.Errorf("workspace a.txt %q b.txt %q, want both turns' edits", a, b)
	}
	reqs := cs.requests()
	if len(reqs) != before+2 {
		t.Fatalf("%d requests after the follow-up, want 2", len(reqs)-before)
	}
	second := sent(reqs[before])
	inOrder(t, second,
		"write one into a.txt",            // the goal, in the system prompt
		"[tool] ",                         // the first turn's results
		"hello-original",                  // read_file's result
		"verified: all 1 checks passed",   // the first finish
		"Your change is still pending",    // the statement
		"Your change set (a.txt) is kept", //
		"Now also write two into b.txt")   // the new text, last
	if last := reqs[before][len(reqs[before])-1]; last.Role != "user" || !strings.HasSuffix(last.Content, "Now also write two into b.txt") {
		t.Errorf("the last message sent is %s %q, want the user's follow-up", last.Role, last.Content)
	}
	// The checks passed on the whole change (wholeCheck needs a.txt's
	// edit, which the disk did not have), and the proposal offered both.
	if got.Report == nil || !got.Report.Passed {
		t.Errorf("the follow-up's verification: %+v", got.Report)
	}
	var files []string
	f.sink.mu.Lock()
	for _, e := range f.sink.ev {
		if p, ok := e.Payload.(*event.Proposal); ok {
			files = p.Files
		}
	}
	f.sink.mu.Unlock()
	if strings.Join(files, " ") != "a.txt b.txt" {
		t.Errorf("the last proposal offered %v, want a.txt and b.txt", files)
	}
	turns := f.turns(t, res.RunID)
	if len(turns) != 1 || turns[0].Text != "Now also write two into b.txt" || turns[0].Change != TurnPending || turns[0].Follows != "" || turns[0].Budget.Steps != 3 {
		t.Errorf("user_turn events: %+v, want one, pending, same run, 3 steps", turns)
	}
}

// A follow-up on a run that is over starts a run linked to it; a later
// follow-up on that run, whose change is pending, continues it, and its
// restored transcript is the whole conversation's.
func TestFollowUpAfterApplied(t *testing.T) {
	cs := newChatServer(t,
		turnCall("write_file", args{"path": "a.txt", "content": "one\n"}),
		turnCall("finish", args{"summary": "wrote one"}),
		turnCall("write_file", args{"path": "b.txt", "content": "two\n"}),
		turnCall("finish", args{"summary": "wrote two"}),
		turnCall("write_file", args{"path": "c.txt", "content": "three\n"}),
		turnCall("finish", args{"summary": "wrote three"}),
	)
	f := chatFixture(t, map[string]string{"a.txt": "zero\n"}, cs)
	first := f.run(t, checked("write one into a.txt", 10))
	if first.Outcome != OutcomeApplied {
		t.Fatalf("first turn: %s (%v)", first.Outcome, first.Err)
	}
	f.appr.change = Decision{Answer: Defer}
	n := len(cs.requests())
	second := f.follow(t, first.RunID, "Now write two into b.txt")
	if second.RunID == first.RunID {
		t.Fatalf("a follow-up on an applied run went to the same run")
	}
	if second.Outcome != OutcomeAwaitingApproval || second.Changes.Len() != 1 {
		t.Fatalf("second turn: %s (%v), %d files; want b.txt pending alone", second.Outcome, second.Err, second.Changes.Len())
	}
	inOrder(t, sent(cs.requests()[n]),
		"write one into a.txt", "call write_file", `"one\n"`, "verified: all 1 checks passed",
		"Your earlier change (a.txt) was applied to the workspace", "Now write two into b.txt")
	if row, _ := f.store.Run(context.Background(), first.RunID); row.Outcome != string(OutcomeApplied) {
		t.Errorf("the earlier run is %s now, want applied still", row.Outcome)
	}
	turns := f.turns(t, second.RunID)
	if len(turns) != 1 || turns[0].Follows != first.RunID || turns[0].Change != TurnApplied {
		t.Errorf("user_turn of the linked run: %+v", turns)
	}

	// The third turn: a fresh harness (a restart) restores the linked run.
	f.appr.change = Decision{Answer: AllowOnce}
	f.h = f.chatHarness(t, cs)
	n = len(cs.requests())
	third := f.follow(t, second.RunID, "And three into c.txt")
	if third.RunID != second.RunID || third.Outcome != OutcomeApplied {
		t.Fatalf("third turn: %s %s (%v), want %s applied", third.RunID, third.Outcome, third.Err, second.RunID)
	}
	inOrder(t, sent(cs.requests()[n]),
		"write one into a.txt", `"one\n"`, "was applied to the workspace", "Now write two into b.txt",
		`"two\n"`, "Your change is still pending", "And three into c.txt")
	for p, want := range map[string]string{"a.txt": "one\n", "b.txt": "two\n", "c.txt": "three\n"} {
		if got := f.read(t, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
}

// What the model is told about the earlier change, per outcome: a
// rejected change is dropped (the change set starts empty); a failed
// run's unapplied change is carried on into the linked run.
func TestFollowUpStatement(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answer    Answer
		check     string
		change    string
		statement string
		files     int
	}{
		{"rejected", Deny, "true", TurnRejected, "The user rejected your earlier change (a.txt)", 0},
		{"verification failed", AllowOnce, "false", TurnCarried, "Your earlier change (a.txt) was never applied: the run ended verification_failed", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newChatServer(t,
				turnCall("write_file", args{"path": "a.txt", "content": "one\n"}),
				turnCall("finish", args{"summary": "s"}),
				turnCall("finish", args{"summary": "s"}),
				turnCall("finish", args{"summary": "s"}),
				turnCall("finish", args{"summary": "s"}),
			)
			f := chatFixture(t, map[string]string{"a.txt": "zero\n"}, cs)
			f.appr.change = Decision{Answer: tc.answer, Reason: "not like this"}
			c := goal("write one")
			c.Verify.Checks = []contract.Check{{Name: "c", Shell: tc.check}}
			first := f.run(t, c)
			n := len(cs.requests())
			r, err := f.h.Continue(context.Background(), first.RunID, "try again")
			if err != nil {
				t.Fatal(err)
			}
			res := r.Wait()
			if r.ID() == first.RunID {
				t.Fatalf("a %s run was continued in place", first.Outcome)
			}
			inOrder(t, sent(cs.requests()[n]), tc.statement, "try again")
			if tu := f.turns(t, r.ID()); len(tu) != 1 || tu[0].Change != tc.change {
				t.Errorf("user_turn: %+v, want change %s", tu, tc.change)
			}
			if res.Changes.Len() != tc.files {
				t.Errorf("the linked run's change set has %d files, want %d", res.Changes.Len(), tc.files)
			}
			if f.read(t, "a.txt") != "zero\n" {
				t.Errorf("a.txt was written")
			}
		})
	}
}

// A run in flight refuses a follow-up, saying to wait or cancel; a
// change being offered is withdrawn and the follow-up continues it.
func TestFollowUpWhileRunning(t *testing.T) {
	cs := newChatServer(t,
		turnCall("write_file", args{"path": "a.txt", "content": "one\n"}),
		turnCall("finish", args{"summary": "s"}),
		turnCall("write_file", args{"path": "b.txt", "content": "two\n"}),
		turnCall("finish", args{"summary": "s"}),
	)
	cs.block = make(chan struct{})
	f := chatFixture(t, nil, cs)
	offered := make(chan struct{})
	f.h.opts.Approver = offerApprover{h: f.h, Approver: blockingApprover{offered}}
	r, err := f.h.Start(context.Background(), goal("write one"))
	if err != nil {
		t.Fatal(err)
	}
	for len(cs.requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	_, err = f.h.Continue(context.Background(), r.ID(), "more")
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "wait for the run to end, or cancel it") {
		t.Errorf("a follow-up on a running run: %v, want ErrBusy saying to wait or cancel", err)
	}
	close(cs.block)
	<-offered // the approver is asked about the change now
	f.appr.change = Decision{Answer: Defer}
	f.h.opts.Approver = offerApprover{h: f.h, Approver: f.appr}
	next, err := f.h.Continue(context.Background(), r.ID(), "and b.txt")
	if err != nil {
		t.Fatalf("a follow-up while the change is offered: %v", err)
	}
	if res := r.Wait(); res.Outcome != OutcomeAwaitingApproval || !res.Pending {
		t.Errorf("the offered run ended %s, want awaiting approval (withdrawn)", res.Outcome)
	}
	if res := next.Wait(); next.ID() != r.ID() || res.Outcome != OutcomeAwaitingApproval || res.Changes.Len() != 2 {
		t.Errorf("the follow-up: %s %s with %d files, want the same run pending with both", next.ID(), res.Outcome, res.Changes.Len())
	}
}

// blockingApprover allows acts and holds a change until its context
// ends (an editor's review nobody answers).
type blockingApprover struct{ offered chan struct{} }

func (blockingApprover) ApproveAct(context.Context, *ActRequest) (Decision, error) {
	return Decision{Answer: AllowOnce}, nil
}

func (b blockingApprover) ApproveChange(ctx context.Context, _ *Proposal) (Decision, error) {
	close(b.offered)
	<-ctx.Done()
	return Decision{}, ctx.Err()
}

// A budget-stopped run continues in place with a fresh turn budget; an
// empty follow-up and one on a sub-agent are refused.
func TestFollowUpBudgetAndRefusals(t *testing.T) {
	cs := newChatServer(t,
		turnCall("write_file", args{"path": "a.txt", "content": "one\n"}),
		turnCall("finish", args{"summary": "s"}),
	)
	f := chatFixture(t, nil, cs)
	first := f.run(t, checked("write one", 1))
	if first.Outcome != OutcomeBudgetExceeded {
		t.Fatalf("first: %s, want budget_exceeded", first.Outcome)
	}
	got := f.follow(t, first.RunID, "go on")
	if got.RunID != first.RunID || got.Outcome != OutcomeApplied || got.Steps != 2 {
		t.Errorf("follow-up: %s %s after %d steps (%v), want the same run applied after 2", got.RunID, got.Outcome, got.Steps, got.Err)
	}
	if _, err := f.h.Continue(context.Background(), first.RunID, "  "); !errors.Is(err, ErrConfig) {
		t.Errorf("an empty follow-up: %v, want ErrConfig", err)
	}
	if _, err := f.h.Continue(context.Background(), "r-nosuchrun", "x"); !errors.Is(err, trace.ErrNotFound) {
		t.Errorf("an unknown run: %v, want ErrNotFound", err)
	}
}

// The earlier turns reach the model as any long transcript does: a large
// result two turns old is a stub in the follow-up's request, as it would
// be in the earlier run's next one, while the small result stays whole.
func TestFollowUpMasksEarlierTurns(t *testing.T) {
	big := strings.Repeat("BIGLINE of a large file, long enough to be masked\n", 400) // 20 KB
	cs := newChatServer(t,
		turnCall("read_file", args{"path": "big.txt"}),
		turnCall("read_file", args{"path": "small.txt"}),
		turnCall("finish", args{"summary": "looked"}),
		turnCall("finish", args{"summary": "looked again"}),
	)
	f := chatFixture(t, map[string]string{"big.txt": big, "small.txt": "SMALL-CONTENT\n"}, cs)
	first := f.run(t, goal("look at the files"))
	if first.Outcome != OutcomeUnverified {
		t.Fatalf("first: %s (%v)", first.Outcome, first.Err)
	}
	if !strings.Contains(sent(cs.requests()[1]), "BIGLINE") {
		t.Fatalf("control: the big result should be whole in the request right after it")
	}
	n := len(cs.requests())
	got := f.follow(t, first.RunID, "what else?")
	if got.Outcome != OutcomeUnverified {
		t.Fatalf("follow-up: %s (%v)", got.Outcome, got.Err)
	}
	req := sent(cs.requests()[n])
	if strings.Contains(req, "BIGLINE") || !strings.Contains(req, "[result hidden to save context: read_file big.txt") {
		t.Errorf("the follow-up's request should hold big.txt's result as a stub:\n%.2000s", req)
	}
	inOrder(t, req, "look at the files", "read_file big.txt", "SMALL-CONTENT", "The earlier run ended unverified without a change", "what else?")
}

// Feedback on a rejected change keeps its place when the run is restored
// again: it stays in the user message holding the finish result, so the
// restored transcript is the one the model saw (no two user messages in
// a row, which the Anthropic API refuses).
func TestFeedbackKeepsItsPlaceOnRestore(t *testing.T) {
	f := newFixture(t, nil, map[string][]turn{"": {
		say(10, "write_file", args{"path": "a.txt", "content": "one\n"}),
		say(10, "finish", args{"summary": "s"}),
		say(10, "write_file", args{"path": "a.txt", "content": "revised\n"}),
		say(10, "finish", args{"summary": "s"}),
		say(10, "finish", args{"summary": "s"}),
	}})
	f.appr.change = Decision{Answer: Defer}
	first := f.run(t, goal("write a.txt"))
	r, err := f.harness(t).RejectWithFeedback(context.Background(), first.RunID, "do X instead")
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Wait(); res.Outcome != OutcomeAwaitingApproval {
		t.Fatalf("after feedback: %s (%v)", res.Outcome, res.Err)
	}
	f.h = f.harness(t)
	if res := f.follow(t, first.RunID, "and Y"); res.Outcome != OutcomeAwaitingApproval {
		t.Fatalf("follow-up: %s (%v)", res.Outcome, res.Err)
	}
	reqs := f.prov.requests()
	msgs := reqs[len(reqs)-1].Messages
	for i, m := range msgs {
		if i > 0 && m.Role == model.RoleUser && msgs[i-1].Role == model.RoleUser {
			t.Errorf("messages %d and %d are both the user's: %q / %q", i-1, i, msgs[i-1].Text, m.Text)
		}
		if strings.Contains(m.Text, "do X instead") && len(m.ToolResults) == 0 {
			t.Errorf("the feedback is a message of its own, not beside the finish result it answers")
		}
	}
	inOrder(t, fmt.Sprint(msgs), "do X instead", "still pending", "and Y")
}

// A cancelled run continues in place (here one cancelled before its
// first step: the follow-up joins the first message); a run stopped on
// an act it asked about refuses a follow-up, naming approve and reject.
func TestFollowUpAfterCancelAndOnAnAct(t *testing.T) {
	f := newFixture(t, nil, map[string][]turn{"": {
		say(10, "run", args{"argv": []string{"true"}}),
		say(10, "finish", args{"summary": "s"}),
	}})
	// The first call waits until the run is cancelled; later ones are
	// the script's.
	gate := make(chan struct{})
	var once sync.Once
	h, err := New(Options{Root: f.root, Store: f.store, Approver: f.appr, Sandbox: copySandbox{t},
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) {
			return providerFunc(func(ctx context.Context, req *model.Request) (*model.Response, error) {
				first := false
				once.Do(func() { first = true })
				if first {
					close(gate)
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return f.prov.Complete(ctx, req)
			}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	ctx, cancel := context.WithCancel(context.Background())
	r, err := f.h.Start(ctx, goal("run true"))
	if err != nil {
		t.Fatal(err)
	}
	<-gate
	cancel()
	if res := r.Wait(); res.Outcome != OutcomeCancelled {
		t.Fatalf("first: %s", res.Outcome)
	}
	f.appr.act = Decision{Answer: Defer}
	res := f.follow(t, r.ID(), "go ahead now")
	if res.RunID != r.ID() || res.Outcome != OutcomeAwaitingApproval || res.Pending {
		t.Fatalf("follow-up: %s %s pending=%v, want %s stopped on the act", res.RunID, res.Outcome, res.Pending, r.ID())
	}
	first := f.prov.requests()[0].Messages[0]
	if first.Role != model.RoleUser || !strings.Contains(first.Text, "The run stopped before it finished (cancelled") || !strings.HasSuffix(first.Text, "go ahead now") {
		t.Errorf("the first message should end with the statement and the follow-up:\n%s", first.Text)
	}
	_, err = f.h.Continue(context.Background(), r.ID(), "and more")
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "ioh-lsp approve "+r.ID()) {
		t.Errorf("a follow-up on a run stopped on an act: %v, want ErrConfig naming approve", err)
	}
}
