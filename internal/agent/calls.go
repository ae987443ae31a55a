package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// execCalls runs a turn's tool calls in order, answering each with a
// result; done holds results already given before a deferral. Runs of
// consecutive read-only calls execute in parallel once each is authorized.
// finished is non-nil when a finish call ended the loop (verification
// accepted the change, or failed for the last time); deferred means an
// approval was deferred and the turn stops here.
func (a *agentRun) execCalls(ctx context.Context, sc *stepCtx, calls []model.ToolCall, done []model.ToolResult) (results []model.ToolResult, finished *end, deferred bool, err error) {
	results = append([]model.ToolResult(nil), done...)
	for i := len(done); i < len(calls); {
		j := i + 1
		if a.parallel(calls[i]) {
			for j < len(calls) && a.parallel(calls[j]) {
				j++
			}
		}
		batch := make([]model.ToolResult, j-i)
		allowed := make([]bool, j-i)
		judged := make([][]tools.Act, j-i)
		deferred := false
		for k := i; k < j; k++ {
			res, acts, ok, def, err := a.authorize(ctx, sc, calls[k])
			if err != nil {
				return nil, nil, false, err
			}
			if def {
				// Answer the calls authorized before the deferred one; the
				// rest are asked again on resume.
				deferred, j = true, k
				batch, allowed = batch[:k-i], allowed[:k-i]
				break
			}
			if !ok {
				res = a.refused(sc, calls[k], res)
			}
			batch[k-i], allowed[k-i], judged[k-i] = res, ok, acts
		}
		var wg sync.WaitGroup
		var firstErr error
		var mu sync.Mutex
		for k := i; k < j; k++ {
			if !allowed[k-i] {
				continue
			}
			run := func(k int) {
				r, fin, err := a.invoke(tools.WithJudged(ctx, judged[k-i]), sc, calls[k])
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				batch[k-i] = r
				if fin != nil {
					finished = fin
				}
			}
			if j-i == 1 {
				run(k)
				continue
			}
			wg.Add(1)
			go func(k int) { defer wg.Done(); run(k) }(k)
		}
		wg.Wait()
		if firstErr != nil {
			return nil, nil, false, firstErr
		}
		results = append(results, batch...)
		if deferred {
			return results, finished, true, nil
		}
		i = j
	}
	return results, finished, false, nil
}

// parallel reports a call that may run alongside its neighbours:
// read-only tools, and spawn_agent (each child works on its own clone).
func (a *agentRun) parallel(c model.ToolCall) bool {
	t, ok := a.tools[c.Name]
	return ok && (t.ReadOnly() || c.Name == tools.SpawnName)
}

// authorize checks a call against the policy and, for Ask-tier acts, the
// approver. ok false comes with the error result the model sees; ok true
// with the acts that were allowed, which the call is then bound to
// (tools.WithJudged).
func (a *agentRun) authorize(ctx context.Context, sc *stepCtx, c model.ToolCall) (model.ToolResult, []tools.Act, bool, bool, error) {
	t, ok := a.tools[c.Name]
	if !ok {
		names := make([]string, 0, len(a.tools))
		for n := range a.tools {
			names = append(names, n)
		}
		sort.Strings(names)
		return errResult(c, "unknown tool %q; the tools are: %s", c.Name, strings.Join(names, ", ")), nil, false, false, nil
	}
	acts, err := t.Acts(c.Arguments)
	if err != nil {
		return errResult(c, "%s: %v", c.Name, err), nil, false, false, nil
	}
	for _, act := range acts {
		v := a.check(act)
		if v.Effect == policy.Ask && a.rememberedExact(act) {
			v.Effect, v.Layer, v.Reason = policy.Allow, policy.LayerRemembered, "allowed for this run earlier"
		}
		v = a.grantOnce(act, v)
		sc.add(a.event(verdictEvent(c.Name, v)))
		switch v.Effect {
		case policy.Allow:
			continue
		case policy.Deny:
			a.st.Denied = true
			return errResult(c, "denied by policy: %s %s (%s)", v.Act, v.Target, describe(v)), nil, false, false, nil
		}
		d, recorded := a.takeAnswer(c.Name, v)
		if !recorded {
			d, err = a.h.opts.Approver.ApproveAct(ctx, &ActRequest{Run: a.id, Step: a.totals.Steps + 1, Tool: c.Name, Verdict: v})
		}
		if err != nil {
			if ctx.Err() != nil {
				return model.ToolResult{}, nil, false, false, ctx.Err()
			}
			d = Decision{Answer: Deny, Reason: err.Error(), By: "the approver, which failed"}
		}
		// recorded: answered by approve/reject while the run was stopped
		sc.add(a.event(&event.Approval{Tool: c.Name, Act: string(v.Act), Target: v.Target, Answer: string(d.Answer), Reason: d.Reason, Recorded: recorded}))
		switch d.Answer {
		case AllowOnce, Applied:
		case AllowRun:
			if err := a.remember(act); err != nil {
				return model.ToolResult{}, nil, false, false, err
			}
		case Defer:
			a.st.Deferred = &deferredAct{Tool: c.Name, Act: string(v.Act), Target: v.Target}
			return model.ToolResult{}, nil, false, true, nil
		default:
			a.st.Denied = true
			reason := d.Reason
			if reason == "" {
				reason = "no reason given"
			}
			by := d.By
			if by == "" {
				by = "the user"
			}
			return errResult(c, "denied by %s: %s %s: %s", by, v.Act, v.Target, reason), nil, false, false, nil
		}
	}
	return model.ToolResult{}, acts, true, false, nil
}

// refused records a call that does not run (an unknown tool, arguments
// that do not parse or name a path outside the workspace, an act policy or
// the user denied) as every call is recorded, a tool_call and its error
// tool_result, and returns the result the model gets, redacted.
func (a *agentRun) refused(sc *stepCtx, c model.ToolCall, res model.ToolResult) model.ToolResult {
	res.Content = a.h.redact.String(res.Content)
	sc.add(a.event(&event.ToolCall{Tool: c.Name, ID: c.ID, Arguments: preview(string(c.Arguments), 2000)}))
	sc.add(a.event(&event.ToolResult{Tool: c.Name, ID: c.ID, IsError: true, Bytes: len(res.Content), Content: preview(res.Content, 500)}))
	return res
}

// invoke runs an authorized call. finish is handled here: it verifies the
// change and answers the call with the verdict.
func (a *agentRun) invoke(ctx context.Context, sc *stepCtx, c model.ToolCall) (model.ToolResult, *end, error) {
	sc.add(a.event(&event.ToolCall{Tool: c.Name, ID: c.ID, Arguments: preview(string(c.Arguments), 2000)}))
	var r tools.Result
	var fin *end
	var err error
	if c.Name == tools.FinishName {
		p, _ := tools.ParseFinish(c.Arguments)
		r, fin, err = a.finish(ctx, sc, p.Summary)
	} else {
		r, err = a.tools[c.Name].Call(ctx, c.Arguments)
	}
	a.drainNet(sc) // the connections its commands made (netaccess.go)
	if err != nil {
		if ctx.Err() != nil {
			return model.ToolResult{}, nil, ctx.Err()
		}
		a.h.log.Warn("tool failed", "run", a.id, "tool", c.Name, "err", err)
		r = tools.Errorf("%s failed: %v", c.Name, err)
	}
	r.Content = a.h.redact.String(r.Content)
	tr := &event.ToolResult{Tool: c.Name, ID: c.ID, IsError: r.IsError, Bytes: len(r.Content), Content: preview(r.Content, 500)}
	if !r.IsError {
		tr.Wrote = r.Wrote
	}
	sc.add(a.event(tr))
	return model.ToolResult{CallID: c.ID, Content: r.Content, IsError: r.IsError}, fin, nil
}

// check asks the run's policy about one act.
func (a *agentRun) check(act tools.Act) policy.Verdict { return judge(a.pol, act) }

// judge asks p about one act.
func judge(p *policy.Policy, act tools.Act) policy.Verdict {
	switch {
	case act.Act == policy.ActExec && act.Shell != "":
		return p.CheckShell(act.Shell)
	case act.Act == policy.ActExec && len(act.Argv) > 0:
		return p.CheckArgv(act.Argv)
	case act.Act == policy.ActWrite || act.Act == policy.ActRead:
		// Resolved comes from the change set's own resolution
		// (tools.PathAct), the one the tool then reads or writes through.
		return p.CheckPath(act.Act, act.Target, act.Resolved)
	}
	return p.Check(act.Act, act.Target)
}

// checkRead judges a read of a file a search found, as authorize would
// judge a read_file of it (answers remembered for the run included).
func (a *agentRun) checkRead(lexical, resolved string) policy.Verdict {
	act := tools.Act{Act: policy.ActRead, Target: lexical, Resolved: resolved}
	v := a.check(act)
	if v.Effect == policy.Ask && a.rememberedExact(act) {
		v.Effect, v.Layer, v.Reason = policy.Allow, policy.LayerRemembered, "allowed for this run earlier"
	}
	return v
}

// remember adds an "allow for this run" rule for exactly this act. A
// target is a rule pattern only when it matches nothing but itself: one
// holding glob characters (a file named ".env[.]local", an argument "*")
// would, as a pattern, allow acts the user was never shown, so it is
// remembered exactly instead, as is a target that is not a valid pattern.
func (a *agentRun) remember(act tools.Act) error {
	if !strings.ContainsAny(act.Target, globMeta) {
		a.st.Remembered = append(a.st.Remembered, policy.Rule{Act: act.Act, Effect: policy.Allow, Pattern: act.Target})
		p, err := a.withRemembered()
		if err == nil {
			a.pol = p
			return nil
		}
		a.st.Remembered = a.st.Remembered[:len(a.st.Remembered)-1]
	}
	a.st.Exact = append(a.st.Exact, string(act.Act)+" "+act.Target)
	return nil
}

// globMeta are the characters a policy pattern gives a meaning to (path
// globs with classes and alternatives, argv and host wildcards, escapes).
const globMeta = "*?[]{}\\"

func (a *agentRun) rememberedExact(act tools.Act) bool {
	for _, r := range a.st.Remembered {
		if r.Act == act.Act && r.Pattern == act.Target {
			return true
		}
	}
	for _, e := range a.st.Exact {
		if e == string(act.Act)+" "+act.Target {
			return true
		}
	}
	return false
}

func verdictEvent(tool string, v policy.Verdict) *event.Policy {
	p := &event.Policy{Tool: tool, Act: string(v.Act), Target: v.Target, Effect: string(v.Effect), Layer: string(v.Layer), Reason: v.Reason}
	if v.Rule != nil {
		p.Rule = fmt.Sprintf("%s %s %s", v.Rule.Effect, v.Rule.Act, v.Rule.Pattern)
	}
	return p
}

func describe(v policy.Verdict) string {
	s := "layer " + string(v.Layer)
	if v.Rule != nil {
		s += fmt.Sprintf(", rule %s %s %q", v.Rule.Effect, v.Rule.Act, v.Rule.Pattern)
	}
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	return s
}

func errResult(c model.ToolCall, format string, args ...any) model.ToolResult {
	return model.ToolResult{CallID: c.ID, Content: fmt.Sprintf(format, args...), IsError: true}
}

func preview(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
