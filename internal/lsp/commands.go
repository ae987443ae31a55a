package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// RunInfo is one entry of ioh.runs (declared in lsp/api).
type RunInfo = api.RunInfo

// RunLimits is a run's budget in ioh.runs.
type RunLimits = api.RunLimits

func limitsOf(b contract.Budget) *RunLimits {
	if b == (contract.Budget{}) {
		return nil
	}
	l := &RunLimits{Steps: b.Steps, Tokens: b.Tokens, CostUSD: b.CostUSD}
	if b.Wall > 0 {
		l.Wall = b.Wall.String()
	}
	return l
}

func costOf(usd float64, known bool) *float64 {
	if !known {
		return nil
	}
	return &usd
}

func infoOf(st runState) RunInfo {
	outcome := st.outcome
	if st.reviewing && outcome == agent.OutcomeRunning {
		outcome = agent.OutcomeAwaitingApproval
	}
	return RunInfo{
		RunID: st.id, Goal: st.goal, Outcome: string(outcome), Steps: st.steps,
		Tokens: st.tokens, CostUSD: costOf(st.cost, !st.unpriced), Limits: limitsOf(st.limits),
		Started: st.started.UTC().Format(time.RFC3339),
	}
}

// commandRun: {contract: path-or-uri} or {inline: contract} → {runId}
// (api.RunArgs.Check has made sure exactly one is given).
func (s *Server) commandRun(ctx context.Context, a api.RunArgs) (api.RunRef, error) {
	var c *contract.Contract
	var folder string
	var err error
	if a.Contract != "" {
		c, folder, err = s.loadContract(a.Contract)
	} else {
		c, folder, err = s.inlineContract(a.Inline)
	}
	path := ""
	if a.Contract != "" {
		path, _ = s.contractPath(a.Contract)
	}
	if err != nil {
		s.refuseStart(path, err)
		return api.RunRef{}, invalidParams("%s: %v", cmdRun, err)
	}
	id, err := s.startRun(ctx, folder, c)
	if err != nil {
		s.refuseStart(path, err)
		// What the configuration ignored was logged while the run was
		// prepared: let it reach the editor before the error does.
		s.drainOutbox(ctx)
		return api.RunRef{}, err
	}
	s.startedFrom(path)
	s.markIgnored(path, id)
	return api.RunRef{RunID: id}, nil
}

// loadContract reads a task file (an open buffer wins over the disk).
func (s *Server) loadContract(ref string) (*contract.Contract, string, error) {
	p, err := s.contractPath(ref)
	if err != nil {
		return nil, "", err
	}
	var data []byte
	if doc, ok := s.docs.byPath(p); ok {
		data = doc.text
	} else {
		// Only a regular file of bounded size, opened without blocking:
		// the client may name /dev/zero or a FIFO.
		b, err := contract.ReadFile(p)
		if err != nil {
			return nil, "", err
		}
		data = b
	}
	c, err := contract.Parse(data, p)
	if err != nil {
		return nil, "", err
	}
	// A relative cassette stays as written: config.PrepareContract
	// resolves it once, against the task file's directory.
	c.Path = p
	folder, err := s.folderFor(p)
	if err != nil {
		return nil, "", err
	}
	return c, folder, nil
}

// inlineContract parses a contract object sent in the command.
func (s *Server) inlineContract(raw json.RawMessage) (*contract.Contract, string, error) {
	fs := s.folderPaths()
	if len(fs) == 0 {
		return nil, "", fmt.Errorf("no workspace folder is open")
	}
	c, err := contract.Parse(raw, "inline contract")
	if err != nil {
		return nil, "", err
	}
	c.Path = ""
	return c, fs[0], nil
}

// commandApprove applies a pending change: a held proposal through the
// editor, otherwise through the harness (a deferred run).
func (s *Server) commandApprove(ctx context.Context, a api.ApproveArgs) (api.Decided, error) {
	act := agent.Decision{Answer: agent.AllowOnce}
	if a.ForRun {
		act.Answer = agent.AllowRun
	}
	if out, ok, err := s.answerAct(ctx, a.RunID, act); ok {
		return out, err
	}
	if held, err := s.answerHeld(ctx, a.RunID, true, ""); held {
		if err != nil {
			return api.Decided{}, err
		}
		return s.awaitOutcome(ctx, a.RunID)
	}
	if out, ok, err := s.applyPending(ctx, a.RunID); ok {
		return out, err
	}
	eng, err := s.engineOf(ctx, a.RunID)
	if err != nil {
		return api.Decided{}, err
	}
	res, err := eng.Harness.Approve(ctx, a.RunID)
	if err != nil {
		return api.Decided{}, fmt.Errorf("approve %s: %w", a.RunID, err)
	}
	s.recordResult(a.RunID, res)
	return api.Decided{RunID: a.RunID, Outcome: string(res.Outcome)}, nil
}

// commandReject drops a pending change.
func (s *Server) commandReject(ctx context.Context, a api.RejectArgs) (api.Decided, error) {
	reason := a.Reason
	if reason == "" {
		reason = "rejected in the editor"
	}
	if out, ok, err := s.answerAct(ctx, a.RunID, agent.Decision{Answer: agent.Deny, Reason: reason}); ok {
		return out, err
	}
	if held, err := s.answerHeld(ctx, a.RunID, false, reason); held {
		if err != nil {
			return api.Decided{}, err
		}
		return s.awaitOutcome(ctx, a.RunID)
	}
	eng, err := s.engineOf(ctx, a.RunID)
	if err != nil {
		return api.Decided{}, err
	}
	res, err := eng.Harness.Reject(ctx, a.RunID, reason)
	if err != nil {
		return api.Decided{}, fmt.Errorf("reject %s: %w", a.RunID, err)
	}
	s.recordResult(a.RunID, res)
	return api.Decided{RunID: a.RunID, Outcome: string(res.Outcome)}, nil
}

// awaitOutcome waits for a run answered through its held proposal to end.
func (s *Server) awaitOutcome(ctx context.Context, id string) (api.Decided, error) {
	st, _ := s.runs.lookup(id)
	if st.done != nil {
		select {
		case <-st.done:
		case <-ctx.Done():
			return api.Decided{}, ctx.Err()
		}
	}
	st, _ = s.runs.lookup(id)
	return api.Decided{RunID: id, Outcome: string(st.outcome)}, nil
}

// engineOf returns the engine for a run seen in this session, else the
// first folder's.
func (s *Server) engineOf(ctx context.Context, id string) (*Engine, error) {
	if st, ok := s.runs.lookup(id); ok {
		if st.outcome == agent.OutcomeRunning {
			return nil, fmt.Errorf("run %s is still running", id)
		}
		if st.folder != "" {
			return s.engine(ctx, st.folder)
		}
	}
	fs := s.folderPaths()
	if len(fs) == 0 {
		return nil, fmt.Errorf("run %s: no workspace folder is open", id)
	}
	return s.engine(ctx, fs[0])
}

// recordResult updates a run from a result obtained outside its goroutine.
func (s *Server) recordResult(id string, res *agent.Result) {
	if res == nil {
		return
	}
	s.runs.with(id, func(st *runState) {
		st.outcome, st.result = res.Outcome, res
		if res.Steps > 0 {
			st.steps = res.Steps
		}
	})
	s.refreshLenses()
}

// commandCancel cancels a run in flight.
func (s *Server) commandCancel(ctx context.Context, a api.RunRef) (api.Cancelled, error) {
	if _, ok := s.runs.lookup(a.RunID); !ok {
		return api.Cancelled{}, invalidParams("%s: no run %q in this session", cmdCancel, a.RunID)
	}
	return api.Cancelled{RunID: a.RunID, Cancelled: s.cancelRun(a.RunID)}, nil
}

// commandResume continues an interrupted or deferred run: {runId,
// budget?}. A budget raises the run's limits (each may only raise); a run
// its budget stopped, resumed without one, asks the user how much more
// (budget.go).
func (s *Server) commandResume(ctx context.Context, a api.ResumeArgs) (api.Resumed, error) {
	var raise contract.Budget
	if a.Budget != nil {
		var err error
		if raise, err = budgetRaise(*a.Budget).budget(); err != nil {
			return api.Resumed{}, invalidParams("%s: %v", cmdResume, err)
		}
	} else {
		r, asked, err := s.askRaise(ctx, a.RunID)
		if err != nil {
			return api.Resumed{}, err
		}
		if asked && r == (contract.Budget{}) {
			return api.Resumed{RunID: a.RunID, Resumed: ptr(false)}, nil
		}
		raise = r
	}
	if err := s.resumeRun(ctx, a.RunID, raise); err != nil {
		return api.Resumed{}, err
	}
	return api.Resumed{RunID: a.RunID}, nil
}

// commandRuns lists the workspace's root runs: those recorded in the
// trace stores of the open folders, with this session's runs (fresher
// while they are in flight) over them.
func (s *Server) commandRuns(ctx context.Context, _ api.NoArgs) ([]RunInfo, error) {
	byID := map[string]RunInfo{}
	for _, folder := range s.folderPaths() {
		eng, err := s.engine(ctx, folder)
		if err != nil || eng.history() == nil {
			continue // the session's own runs are still listed
		}
		runs, err := eng.history().Runs(ctx)
		if err != nil {
			return nil, fmt.Errorf("list runs of %s: %w", folder, err)
		}
		for _, r := range runs {
			if r.Parent != "" {
				continue
			}
			sp := r.Spend
			byID[r.RunID] = RunInfo{
				RunID: r.RunID, Goal: r.Goal, Outcome: string(r.Shown), Steps: sp.Steps,
				Tokens: sp.Tokens, CostUSD: costOf(sp.CostUSD, sp.CostKnown()), Limits: limitsOf(sp.Limits),
				Started: r.Started.UTC().Format(time.RFC3339),
			}
		}
	}
	for _, st := range s.runs.list() {
		info := infoOf(st)
		if old, ok := byID[st.id]; ok {
			if info.Goal == "" {
				info.Goal = old.Goal
			}
			if info.Limits == nil {
				info.Limits = old.Limits
			}
			if info.CostUSD != nil && old.CostUSD == nil && !st.unpriced && st.outcome != agent.OutcomeRunning {
				info.CostUSD = nil // the store knows of unpriced calls the session did not see
			}
		}
		byID[st.id] = info
	}
	out := make([]RunInfo, 0, len(byID))
	for _, r := range byID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Started != out[j].Started {
			return out[i].Started < out[j].Started
		}
		return out[i].RunID < out[j].RunID
	})
	return out, nil
}

// commandClearTrace removes a run's diagnostics (all runs without runId).
func (s *Server) commandClearTrace(ctx context.Context, a api.ClearTraceArgs) (api.Cleared, error) {
	s.clearRun(a.RunID)
	return api.Cleared{Cleared: a.RunID}, nil
}

// commandAllowOnce re-runs a task whose act was denied, with that one act
// allowed once (actanswer.go; the built-in layer still wins).
func (s *Server) commandAllowOnce(ctx context.Context, a api.AllowOnceArgs) (api.RunRef, error) {
	id, err := s.allowOnce(ctx, a.RunID, a.Act, a.Target)
	if err != nil {
		return api.RunRef{}, err
	}
	return api.RunRef{RunID: id}, nil
}
