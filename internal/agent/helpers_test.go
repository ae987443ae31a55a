package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// script is a scripted provider: each agent (by Request.Agent) gets its
// turns in order, picked by how many assistant turns its transcript holds,
// so it is stateless like a replay cassette and survives resume.
type script struct {
	mu    sync.Mutex
	turns map[string][]turn
	reqs  []*model.Request
	calls int
}

// turn is one scripted answer: a response, an error, or a function of the
// request.
type turn struct {
	resp *model.Response
	err  error
	fn   func(*model.Request) (*model.Response, error)
}

func (s *script) Name() string { return "script" }

func (s *script) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			n++
		}
	}
	s.mu.Lock()
	s.calls++
	cp := *req
	s.reqs = append(s.reqs, &cp)
	ts := s.turns[req.Agent]
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n >= len(ts) {
		return nil, &model.Error{Class: model.ClassExhausted, Provider: "script", Err: fmt.Errorf("no turn %d for agent %q", n, req.Agent)}
	}
	t := ts[n]
	if t.fn != nil {
		return t.fn(req)
	}
	if t.err != nil {
		return nil, t.err
	}
	r := *t.resp
	return &r, nil
}

func (s *script) requests() []*model.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*model.Request(nil), s.reqs...)
}

// say builds a turn calling tools; args are name, arguments pairs.
func say(usage int64, calls ...any) turn {
	r := &model.Response{Usage: model.Usage{InputTokens: usage, OutputTokens: usage / 10}}
	for i := 0; i < len(calls); i += 2 {
		b, err := json.Marshal(calls[i+1])
		if err != nil {
			panic(err)
		}
		r.ToolCalls = append(r.ToolCalls, model.ToolCall{Name: calls[i].(string), Arguments: b})
	}
	return turn{resp: r}
}

type args = map[string]any

// approver answers from fixed decisions and records what it was asked.
type approver struct {
	mu     sync.Mutex
	act    Decision
	change Decision
	acts   []*ActRequest
	props  int
}

func (a *approver) ApproveAct(_ context.Context, r *ActRequest) (Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.acts = append(a.acts, r)
	return a.act, nil
}

func (a *approver) ApproveChange(_ context.Context, p *Proposal) (Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.props++
	return a.change, nil
}

// copySandbox is a test stand-in for the OS sandbox: it materialises
// workspace ⊕ changes in a temporary copy and runs the command there
// (no containment; the real adapter is internal/sandboxexec).
type copySandbox struct{ t *testing.T }

func (s copySandbox) Exec(ctx context.Context, req *contain.Request) (*contain.Result, error) {
	dir := s.t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(req.Root)); err != nil {
		return nil, err
	}
	for _, c := range req.Changes {
		p := filepath.Join(dir, filepath.FromSlash(c.Path))
		if c.Op == workspace.OpDelete {
			os.Remove(p)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, c.Content, 0o644); err != nil {
			return nil, err
		}
	}
	argv := req.Argv
	if req.Shell != "" {
		argv = []string{"/bin/sh", "-c", req.Shell}
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(dir, req.Dir)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	res := &contain.Result{Output: out, Backend: "test-copy", Duration: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		return nil, err
	}
	return res, nil
}

// fixture is a workspace, a store and a harness over a scripted provider.
type fixture struct {
	dir   string
	root  *workspace.Root
	store *trace.Store
	prov  *script
	appr  *approver
	sink  *sinkRec
	h     *Harness
}

type sinkRec struct {
	mu sync.Mutex
	ev []event.Event
}

func (s *sinkRec) Emit(e event.Event) { s.mu.Lock(); s.ev = append(s.ev, e); s.mu.Unlock() }

func newFixture(t *testing.T, files map[string]string, turns map[string][]turn) *fixture {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := trace.Open(context.Background(), filepath.Join(t.TempDir(), "trace.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{dir: dir, root: root, store: store, prov: &script{turns: turns},
		appr: &approver{act: Decision{Answer: AllowOnce}, change: Decision{Answer: AllowOnce}}, sink: &sinkRec{}}
	f.h = f.harness(t)
	return f
}

func (f *fixture) harness(t *testing.T) *Harness {
	t.Helper()
	h, err := New(Options{
		Root: f.root, Store: f.store, Approver: f.appr, Events: f.sink, Sandbox: copySandbox{t},
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return f.prov, nil },
		Cost: func(_, _ string, u model.Usage) (float64, model.CostSource) {
			return float64(u.InputTokens)*1e-6 + float64(u.OutputTokens)*5e-6, model.CostTable
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (f *fixture) run(t *testing.T, c *contract.Contract) *Result {
	t.Helper()
	r, err := f.h.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return r.Wait()
}

func (f *fixture) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func goal(g string) *contract.Contract {
	return &contract.Contract{Version: 1, Goal: g, Agents: contract.Agents{MaxTotal: 8, MaxDepth: 2, MaxConcurrent: 4}}
}
