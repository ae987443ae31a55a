package acp

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Permission option ids: what each one answers.
const (
	optAllowOnce  = "allow_once"
	optAllowRun   = "allow_always"
	optRejectOnce = "reject_once"
	optRejectRun  = "reject_always"
)

// actOptions are the answers to an Ask-tier act: "always" lasts for the
// run (allow: remembered by the harness as the highest layer, still
// losing to a deny; reject: a deny of that act and target for the rest
// of the run, answered here without asking again).
var actOptions = []permissionOption{
	{OptionID: optAllowOnce, Name: "Allow once", Kind: "allow_once"},
	{OptionID: optAllowRun, Name: "Allow for this run", Kind: "allow_always"},
	{OptionID: optRejectOnce, Name: "Reject", Kind: "reject_once"},
	{OptionID: optRejectRun, Name: "Reject for this run", Kind: "reject_always"},
}

// changeOptions answer the final change: write it, or leave the disk as
// it is.
var changeOptions = []permissionOption{
	{OptionID: optAllowOnce, Name: "Write these files", Kind: "allow_once"},
	{OptionID: optRejectOnce, Name: "Discard the change", Kind: "reject_once"},
}

// approver asks the session's client through session/request_permission.
type approver struct{ ss *session }

// ask sends one permission request and returns the chosen option id.
// The client's "cancelled" outcome cancels the prompt (ACP sends it after
// session/cancel), and the run stops as cancelled.
func (a approver) ask(ctx context.Context, tc toolCall, opts []permissionOption) (string, error) {
	tc.SessionUpdate = ""
	var res requestPermissionResult
	err := a.ss.srv.conn.call(ctx, methodRequestPermission, requestPermissionParams{SessionID: a.ss.id, ToolCall: tc, Options: opts}, &res)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("session/request_permission: %w", err)
	}
	if res.Outcome.Outcome == "cancelled" {
		if a.ss.cancelPrompt() {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return optRejectOnce, nil // no prompt to cancel: a refusal
	}
	if res.Outcome.Outcome != "selected" {
		return "", fmt.Errorf("session/request_permission: unknown outcome %q", res.Outcome.Outcome)
	}
	for _, o := range opts {
		if o.OptionID == res.Outcome.OptionID {
			return o.OptionID, nil
		}
	}
	return "", fmt.Errorf("session/request_permission: the client chose %q, which was not offered", res.Outcome.OptionID)
}

// ApproveAct asks about an Ask-tier act: a pending tool call shows what
// would happen and why the policy asks.
func (a approver) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	v := req.Verdict
	key := req.Run + "|" + string(v.Act) + "|" + v.Target
	a.ss.mu.Lock()
	rejected := a.ss.rejected[key]
	a.ss.asks++
	id := fmt.Sprintf("%s/ask-%d", req.Run, a.ss.asks)
	a.ss.mu.Unlock()
	if rejected {
		a.ss.update(toolCall{SessionUpdate: "tool_call", ToolCallID: id, Kind: kindOf(req.Tool), Status: statusFailed,
			Title:   fmt.Sprintf("%s: %s %s", req.Tool, v.Act, v.Target),
			Content: []toolCallContent{textContent("Rejected: you rejected this for the rest of the run.")}})
		return agent.Decision{Answer: agent.Deny, Reason: "rejected for the rest of this run"}, nil
	}
	if mode := a.mode(); mode != modeAsk && mode != "" {
		d, err := automatic(mode).ApproveAct(ctx, req)
		if err != nil {
			return agent.Decision{}, err
		}
		d = byMode(d, mode)
		if d.Answer == agent.Deny {
			a.ss.update(toolCall{SessionUpdate: "tool_call", ToolCallID: id, Kind: kindOf(req.Tool), Status: statusFailed,
				Title:   fmt.Sprintf("%s: %s %s", req.Tool, v.Act, v.Target),
				Content: []toolCallContent{textContent(fmt.Sprintf("Denied by the session's %s mode: the policy asks before this act and nobody is asked in this mode. Switch the mode to ask to be asked, or allow it in the policy.", mode))}})
		}
		return d, nil
	}
	why := "layer " + string(v.Layer)
	if v.Rule != nil {
		why += fmt.Sprintf(", rule %s %s %q", v.Rule.Effect, v.Rule.Act, v.Rule.Pattern)
	}
	tc := toolCall{SessionUpdate: "tool_call", ToolCallID: id, Kind: kindOf(req.Tool), Status: statusPending,
		Title:     fmt.Sprintf("%s wants to %s %s", req.Tool, v.Act, v.Target),
		Content:   []toolCallContent{textContent(fmt.Sprintf("The policy asks before this %s act (%s).", v.Act, why))},
		RawInput:  map[string]any{"act": string(v.Act), "target": v.Target, "tool": req.Tool},
		Locations: a.ss.tr.locations(actPaths(v.Act, v.Target)),
	}
	a.ss.update(tc)
	choice, err := a.ask(ctx, tc, actOptions)
	if err != nil {
		return agent.Decision{}, err
	}
	switch choice {
	case optAllowOnce, optAllowRun:
		a.ss.tr.expectCall(req.Run, req.Tool, id)
		a.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: statusInProgress})
		if choice == optAllowRun {
			return agent.Decision{Answer: agent.AllowRun}, nil
		}
		return agent.Decision{Answer: agent.AllowOnce}, nil
	case optRejectRun:
		a.ss.mu.Lock()
		a.ss.rejected[key] = true
		a.ss.mu.Unlock()
	}
	a.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: statusFailed,
		Content: []toolCallContent{textContent("Rejected in the editor.")}})
	reason := "rejected in the editor"
	if choice == optRejectRun {
		reason += " for the rest of this run"
	}
	return agent.Decision{Answer: agent.Deny, Reason: reason}, nil
}

// actPaths are the workspace paths an act names (reads and writes).
func actPaths(act any, target string) []string {
	switch fmt.Sprint(act) {
	case "read", "write":
		return []string{target}
	}
	return nil
}

// ApproveChange offers the finished change: each check's output first
// (the verification the change passed), then one permission request
// whose tool call carries the diff of every file. Only "allow" lets the
// harness write the files; a reject leaves the disk untouched.
func (a approver) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	a.showChecks(p)
	mode := a.mode()
	tc := a.changeCall(p, mode == modeAsk || mode == "")
	if mode != modeAsk && mode != "" {
		return a.answerChange(ctx, p, tc, mode)
	}
	a.ss.update(tc)
	choice, err := a.ask(ctx, tc, changeOptionsFor(p.Changes))
	if err != nil {
		return agent.Decision{}, err
	}
	if choice == optChoose {
		return a.chooseFiles(ctx, p, tc.ToolCallID)
	}
	if choice == optAllowOnce {
		a.ss.tr.expectOutcome(p.Run)
		return agent.Decision{Answer: agent.AllowOnce}, nil
	}
	a.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: tc.ToolCallID, Status: statusFailed,
		Content: []toolCallContent{textContent("Discarded: nothing was written.")}})
	return agent.Decision{Answer: agent.Deny, Reason: "rejected in the editor"}, nil
}

// answerChange is the change's answer in the auto and never modes: the
// command line's approver decides, and the panel shows the change with
// what became of it.
func (a approver) answerChange(ctx context.Context, p *agent.Proposal, tc toolCall, mode string) (agent.Decision, error) {
	d, err := automatic(mode).ApproveChange(ctx, p)
	if err != nil {
		return agent.Decision{}, err
	}
	note := fmt.Sprintf("Not written (the session's mode is %s)", mode)
	if d.Reason != "" {
		note += ": " + d.Reason
	}
	note += ". /diff shows it, /approve writes it, /reject drops it."
	switch d.Answer {
	case agent.AllowOnce, agent.AllowRun:
		tc.Status, note = statusInProgress, fmt.Sprintf("Writing it without asking (the session's mode is %s).", mode)
		a.ss.tr.expectOutcome(p.Run)
	case agent.Deny:
		tc.Status = statusFailed
	}
	tc.Content = append(tc.Content, textContent(note))
	a.ss.update(tc)
	return d, nil
}

// showChecks sends each check's output (the verification the change
// passed) to its execute call.
func (a approver) showChecks(p *agent.Proposal) {
	if r := p.Report; r != nil {
		for _, c := range r.Checks {
			out := c.Output
			if len(out) > 8000 {
				out = "…" + out[len(out)-8000:]
			}
			if strings.TrimSpace(out) == "" {
				out = "(no output)"
			}
			a.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: checkID(p.Run, c.Name, c.Phase),
				Content: []toolCallContent{textContent("```\n" + out + "\n```")}})
		}
	}
}

// changeCall is the change as a pending edit call: the summary, whether
// it was verified, and the diff of every file.
func (a approver) changeCall(p *agent.Proposal, asking bool) toolCall {
	changes := p.Changes.Changes()
	var content []toolCallContent
	var paths []string
	for _, ch := range changes {
		content = append(content, a.diff(p.Changes, ch))
		paths = append(paths, ch.Path)
	}
	state := "unverified: the contract has no checks"
	if p.Verified {
		state = "verified: every check passed in the sandbox"
	}
	if p.Report != nil && p.Report.NeedsHuman() {
		state += "; it changes its own checks (" + strings.Join(p.Report.TouchesChecks, "; ") + "), review carefully"
	}
	summary := p.Summary
	if summary == "" {
		summary = p.Goal
	}
	head := fmt.Sprintf("%s\n\nThe change is %s.", summary, state)
	if asking {
		head += " Nothing is written until you allow it."
	}
	content = append([]toolCallContent{textContent(head)}, content...)
	return toolCall{SessionUpdate: "tool_call", ToolCallID: p.Run + "/change", Kind: kindEdit, Status: statusPending,
		Title:     fmt.Sprintf("Write the change to %d file(s): %s", len(changes), strings.Join(paths, ", ")),
		Content:   content,
		Locations: a.ss.tr.locations(paths),
		Meta:      map[string]any{"ioh": map[string]any{"run": p.Run, "verified": p.Verified, "files": paths}},
	}
}

// diff is one file of the change as ACP diff content: the whole file
// before (null for a new file) and after ("" for a deletion).
func (a approver) diff(cs *workspace.ChangeSet, ch workspace.Change) toolCallContent {
	path := a.ss.tr.abs(ch.Path)
	if path == "" {
		path = ch.Path
	}
	var old *string
	if b, ok := cs.Base(ch.Path); ok {
		s := string(b)
		old = &s
	} else if ch.From != "" {
		if b, ok := cs.Base(ch.From); ok {
			s := string(b)
			old = &s
		}
	}
	if !utf8.Valid(ch.Content) || (old != nil && !utf8.ValidString(*old)) {
		// A binary file has no text diff: say what changes.
		return textContent(fmt.Sprintf("%s: binary file, %s (%d bytes)", ch.Path, ch.Op, len(ch.Content)))
	}
	c := diffContent(path, old, string(ch.Content))
	if ch.From != "" || ch.Op == workspace.OpDelete {
		c.Meta = map[string]any{"ioh": map[string]any{"op": string(ch.Op), "from": ch.From}}
	}
	return c
}
