package lsp

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// runState is what the server knows of one run started or seen in this
// session. Guarded by registry.mu.
type runState struct {
	id       string
	goal     string
	folder   string
	eng      *Engine
	contract *contract.Contract
	started  time.Time
	outcome  agent.Outcome
	steps    int
	tokens   int64
	cached   int64 // the run's own cache reads (not in tokens)
	cost     float64
	unpriced bool            // a call could not be priced: the cost is unknown
	limits   contract.Budget // the run's budget as its budget events report it
	tool     string          // the tool of the latest call
	events   []event.Event
	cancel   context.CancelFunc
	token    string // work-done progress token, "" without progress
	report   string // the last progress report sent
	proposal *agent.Proposal
	held     *heldProposal
	// reviewing: the change is with the user for review (reviewstate.go)
	reviewing bool
	result    *agent.Result
	done      chan struct{}
}

// registry holds the session's runs.
type registry struct {
	mu   sync.Mutex
	runs map[string]*runState
	wg   sync.WaitGroup
}

func newRegistry() *registry { return &registry{runs: map[string]*runState{}} }

// ensure returns the run's state, creating it on first sight.
func (r *registry) ensure(id string) *runState {
	st, ok := r.runs[id]
	if !ok {
		st = &runState{id: id, outcome: agent.OutcomeRunning, started: time.Now(), done: make(chan struct{})}
		r.runs[id] = st
	}
	return st
}

// with runs f on the run's state under the lock.
func (r *registry) with(id string, f func(st *runState)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.ensure(id))
}

// lookup returns a copy of the run's summary fields.
func (r *registry) lookup(id string) (runState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.runs[id]
	if !ok {
		return runState{}, false
	}
	return *st, true
}

// list returns the runs, oldest first.
func (r *registry) list() []runState {
	r.mu.Lock()
	out := make([]runState, 0, len(r.runs))
	for _, st := range r.runs {
		out = append(out, *st)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].started.Equal(out[j].started) {
			return out[i].id < out[j].id
		}
		return out[i].started.Before(out[j].started)
	})
	return out
}

// byToken finds the run owning a progress token.
func (r *registry) byToken(token string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, st := range r.runs {
		if st.token != "" && st.token == token {
			return id, true
		}
	}
	return "", false
}

// setLastReport records msg as the run's last report; false when it is
// the same as the previous one.
func (r *registry) setLastReport(id, msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.runs[id]
	if !ok || st.report == msg {
		return false
	}
	st.report = msg
	return true
}

func (r *registry) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.runs {
		if st.cancel != nil {
			st.cancel()
		}
	}
}

// waitAll waits for every run goroutine of the session.
func (r *registry) waitAll() { r.wg.Wait() }

// pending lists runs with a proposal waiting for the user.
func (r *registry) pending() []runState {
	var out []runState
	for _, st := range r.list() {
		if st.held != nil || st.outcome == agent.OutcomeAwaitingApproval {
			out = append(out, st)
		}
	}
	return out
}

// history is the engine's read side of its trace store (runs from before
// this session, or from another process); nil without a harness.
func (e *Engine) history() *agent.History {
	if e == nil || e.Harness == nil {
		return nil
	}
	return e.Harness.History()
}

// note records in run's trace what the server saw happen to it (a review
// opened, an edit applied in part or not as sent); a failure costs only
// the record, and is logged as what.
func (s *Server) note(ctx context.Context, folder, run, what string, p event.Payload) {
	eng, err := s.engine(ctx, folder)
	if err == nil && eng.history() == nil {
		err = errors.New("the folder has no engine")
	}
	if err != nil {
		s.log.Warn(what, "run", run, "err", err)
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := eng.history().Note(cctx, run, p); err != nil {
		s.log.Warn(what, "run", run, "err", err)
	}
}

// recovered says, for people, that opening the engine's trace store
// found it corrupt and moved it aside; "" when it did not.
func (e *Engine) recovered() string {
	if h := e.history(); h != nil {
		return h.Recovered()
	}
	return ""
}
