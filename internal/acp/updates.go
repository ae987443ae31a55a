package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// translator turns a session's trace events into session/update payloads.
// The same code serves a live run (events from the harness's sink) and
// session/load (events read back from the trace store), so what an editor
// sees on load is what it saw live. It is safe for concurrent use
// (parallel tool calls emit from several goroutines).
type translator struct {
	root *workspace.Root
	// live: the approver has already shown permission requests and the
	// final change, so approval and proposal events are not repeated.
	live bool

	mu      sync.Mutex
	plan    []planEntry
	checkAt map[string]int      // check name → plan index
	reuse   map[string][]string // run|tool → ids of permission tool calls awaiting their call
	denials int
	// applying: runs whose change the user allowed; their outcome settles
	// the change's tool call.
	applying map[string]bool
	// streamed: runs whose current model turn arrived as text_delta
	// pieces.
	streamed map[string]bool
}

func newTranslator(root *workspace.Root, live bool) *translator {
	return &translator{root: root, live: live, checkAt: map[string]int{}, reuse: map[string][]string{}, applying: map[string]bool{}, streamed: map[string]bool{}}
}

// startPlan builds the plan of a contract: the change, one entry per
// check, the review. It returns the first plan update.
func (t *translator) startPlan(c *contract.Contract) planUpdate {
	t.mu.Lock()
	defer t.mu.Unlock()
	goal, _, _ := strings.Cut(strings.TrimSpace(c.Goal), "\n")
	if len(goal) > 120 {
		goal = goal[:117] + "…"
	}
	t.plan = []planEntry{{Content: "Change the code: " + goal, Priority: "high", Status: statusInProgress}}
	t.checkAt = map[string]int{}
	for _, ch := range c.Verify.Checks {
		cmd := ch.Shell
		if cmd == "" {
			cmd = strings.Join(ch.Run, " ")
		}
		t.checkAt[ch.Name] = len(t.plan)
		t.plan = append(t.plan, planEntry{Content: fmt.Sprintf("Verify in the sandbox: %s (%s)", ch.Name, cmd), Priority: "high", Status: "pending"})
	}
	t.plan = append(t.plan, planEntry{Content: "Review the change before it is written", Priority: "medium", Status: "pending"})
	return t.planLocked()
}

// closePlan replaces the plan by one finished entry that says why no
// run started.
func (t *translator) closePlan(why string) planUpdate {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.plan = []planEntry{{Content: why, Priority: "high", Status: statusCompleted}}
	t.checkAt = map[string]int{}
	return t.planLocked()
}

func (t *translator) planLocked() planUpdate {
	return planUpdate{SessionUpdate: "plan", Entries: append([]planEntry(nil), t.plan...)}
}

// setPlan sets entry i's status; ok false when there is no plan.
func (t *translator) setPlan(i int, status string) bool {
	if i < 0 || i >= len(t.plan) || t.plan[i].Status == status {
		return false
	}
	t.plan[i].Status = status
	return true
}

// expectCall notes that the next call of tool in run is the one a
// permission request showed as id: its tool_call is sent as an update of
// that id rather than as a second entry.
func (t *translator) expectCall(run, tool, id string) {
	t.mu.Lock()
	t.reuse[run+"|"+tool] = append(t.reuse[run+"|"+tool], id)
	t.mu.Unlock()
}

// expectOutcome notes that run's change was allowed: its outcome settles
// the change's tool call (applied, or refused by a conflict).
func (t *translator) expectOutcome(run string) {
	t.mu.Lock()
	t.applying[run] = true
	t.mu.Unlock()
}

func toolCallID(run, id string) string { return run + "/" + id }

// event returns the updates one event becomes (none for most
// bookkeeping events).
func (t *translator) event(e event.Event) []any {
	t.mu.Lock()
	defer t.mu.Unlock()
	child := e.Parent != ""
	switch p := e.Payload.(type) {
	case *event.RunStarted:
		if child {
			return []any{toolCall{SessionUpdate: "tool_call", ToolCallID: "agent/" + e.Run, Kind: kindThink,
				Title: "Sub-agent: " + p.Goal, Status: statusInProgress}}
		}
	case *event.TextDelta:
		// The model's text as it arrives: one chunk per piece; the turn's
		// model_turn then only ends the message.
		t.streamed[e.Run] = true
		return []any{chunkUpdate{SessionUpdate: messageKind(child), Content: textBlock(p.Text)}}
	case *event.ModelTurn:
		if t.streamed[e.Run] {
			delete(t.streamed, e.Run)
			if p.Text != "" {
				return []any{chunkUpdate{SessionUpdate: messageKind(child), Content: textBlock("\n")}}
			}
			return nil
		}
		if p.Text != "" {
			return []any{chunkUpdate{SessionUpdate: messageKind(child), Content: textBlock(p.Text + "\n")}}
		}
	case *event.Policy:
		if p.Effect == "deny" {
			t.denials++
			why := p.Layer + " layer"
			if p.Rule != "" {
				why += ", rule " + p.Rule
			}
			return []any{toolCall{SessionUpdate: "tool_call", ToolCallID: fmt.Sprintf("%s/denied-%d", e.Run, t.denials),
				Kind: kindOf(p.Tool), Status: statusFailed,
				Title:   fmt.Sprintf("%s denied by policy: %s %s", p.Tool, p.Act, p.Target),
				Content: []toolCallContent{textContent("Denied (" + why + ").")}}}
		}
	case *event.ToolCall:
		return []any{t.toolCallStart(e.Run, p)}
	case *event.ToolResult:
		st := statusCompleted
		if p.IsError {
			st = statusFailed
		}
		id := toolCallID(e.Run, p.ID)
		if q := t.reuse["result|"+id]; len(q) > 0 {
			delete(t.reuse, "result|"+id)
			id = q[0]
		}
		u := toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: st}
		if p.Content != "" {
			u.Content = []toolCallContent{textContent(p.Content)}
		}
		if p.Tool == "finish" && st == statusCompleted {
			// finish's result is the verdict: the change now awaits review.
			if t.setPlan(0, statusCompleted) {
				t.setPlan(len(t.plan)-1, statusInProgress)
				return []any{u, t.planLocked()}
			}
		}
		return []any{u}
	case *event.UserTurn:
		// A follow-up: live, the client shows what the user typed.
		if !t.live && !child {
			return []any{chunkUpdate{SessionUpdate: "user_message_chunk", Content: textBlock(p.Text)}}
		}
	case *event.Budget:
		return []any{usageOf(p)}
	case *event.CheckRun:
		return t.verification(e, p)
	case *event.Proposal:
		if !t.live {
			return []any{toolCall{SessionUpdate: "tool_call", ToolCallID: e.Run + "/change", Kind: kindEdit, Status: statusPending,
				Title: "Proposed change: " + strings.Join(p.Files, ", "), Locations: t.locations(p.Files)}}
		}
	case *event.Approval:
		if t.live {
			return nil
		}
		if p.Change {
			st := statusFailed
			if a := p.Answer; a == "allow_once" || a == "allow_run" || a == "applied" {
				st = statusCompleted
			}
			return []any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: e.Run + "/change", Status: st}}
		}
		return []any{chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(fmt.Sprintf("Permission for %s %s: %s\n", p.Act, p.Target, p.Answer))}}
	case *event.Retry:
		var out []any
		if t.streamed[e.Run] {
			// The failed attempt's pieces are shown already; its retry
			// streams the text again.
			delete(t.streamed, e.Run)
			out = append(out, chunkUpdate{SessionUpdate: messageKind(child), Content: textBlock(" [cut off: the model call failed]\n")})
		}
		what := p.Action
		if p.RetryAttempt != nil {
			what = p.Error
		}
		return append(out, chunkUpdate{SessionUpdate: "agent_thought_chunk", Content: textBlock(fmt.Sprintf("Model call failed (%s), retrying: %s\n", p.Class, what))})
	case *event.Warning:
		return []any{chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock("⚠ " + p.Message + "\n")}}
	case *event.Outcome:
		return t.outcome(e, p)
	}
	return nil
}

// messageKind is the chunk kind of a run's text: the root run speaks,
// a sub-agent's text is a thought.
func messageKind(child bool) string {
	if child {
		return "agent_thought_chunk"
	}
	return "agent_message_chunk"
}

// toolCallStart is the tool_call of one call: its kind, title, the files
// it touches and, for edits, the diff it makes.
func (t *translator) toolCallStart(run string, c *event.ToolCall) toolCall {
	tool := c.Tool
	var args map[string]any
	rawArgs := c.Arguments
	if json.Unmarshal([]byte(rawArgs), &args) != nil {
		args = nil // a preview cut short: shown raw
	}
	u := toolCall{SessionUpdate: "tool_call", ToolCallID: toolCallID(run, c.ID), Kind: kindOf(tool), Status: statusInProgress}
	if q := t.reuse[run+"|"+tool]; len(q) > 0 {
		u.ToolCallID, u.SessionUpdate = q[0], "tool_call_update"
		t.reuse[run+"|"+tool] = q[1:]
		// The call's own id answers its result: map it to this entry.
		t.reuse["result|"+toolCallID(run, c.ID)] = []string{q[0]}
	}
	if args != nil {
		u.RawInput = args
	} else if rawArgs != "" {
		u.RawInput = rawArgs
	}
	u.Title, u.Locations, u.Content = t.describe(tool, args)
	if u.Title == "" {
		u.Title = tool
	}
	return u
}

// describe names what a call does in the workspace.
func (t *translator) describe(tool string, a map[string]any) (string, []location, []toolCallContent) {
	path := str(a, "path")
	switch tool {
	case "read_file":
		return "Read " + path, t.locations([]string{path}), nil
	case "list_dir":
		return "List " + orDot(path), t.locations([]string{orDot(path)}), nil
	case "find":
		return "Find " + str(a, "glob"), nil, nil
	case "grep":
		return "Search for " + str(a, "pattern"), nil, nil
	case "edit_file":
		old := str(a, "old")
		return "Edit " + path, t.locations([]string{path}), []toolCallContent{diffContent(t.abs(path), &old, str(a, "new"))}
	case "write_file":
		var old *string
		if b, err := t.root.ReadFile(path); err == nil {
			s := string(b)
			old = &s
		}
		return "Write " + path, t.locations([]string{path}), []toolCallContent{diffContent(t.abs(path), old, str(a, "content"))}
	case "apply_patch":
		return "Apply a patch", nil, []toolCallContent{textContent("```diff\n" + str(a, "patch") + "\n```")}
	case "delete_file":
		return "Delete " + path, t.locations([]string{path}), nil
	case "rename_file":
		return "Rename " + str(a, "from") + " to " + str(a, "to"), t.locations([]string{str(a, "from"), str(a, "to")}), nil
	case "run":
		if sh := str(a, "shell"); sh != "" {
			return "Run " + sh + " (sandboxed)", nil, nil
		}
		return "Run " + strings.Join(strs(a, "argv"), " ") + " (sandboxed)", nil, nil
	case "spawn_agent":
		return "Start a sub-agent: " + str(a, "goal"), nil, nil
	case "finish":
		return "Finish and verify: " + str(a, "summary"), nil, nil
	}
	return "", nil, nil
}

// kindOf is the ACP tool kind of an agent tool.
func kindOf(tool string) string {
	switch tool {
	case "read_file", "list_dir":
		return kindRead
	case "find", "grep":
		return kindSearch
	case "edit_file", "write_file", "apply_patch":
		return kindEdit
	case "delete_file":
		return kindDelete
	case "rename_file":
		return kindMove
	case "run", "finish":
		return kindExecute
	case "spawn_agent":
		return kindThink
	}
	if strings.Contains(tool, "__") {
		return kindFetch // an MCP server's tool
	}
	return kindOther
}

// verification: a check's run is an execute-kind call with its verdict;
// the summary settles the plan.
func (t *translator) verification(e event.Event, c *event.CheckRun) []any {
	if name := c.Check; name != "" {
		passed := c.Passed
		phase := c.Phase
		st := statusFailed
		verdict := "failed"
		if passed {
			st, verdict = statusCompleted, "passed"
		}
		if phase == "red" {
			verdict = "ran before the change (red phase): " + verdict
		}
		title := fmt.Sprintf("Check %s %s (exit %d, %s sandbox)", name, verdict, c.ExitCode, c.Backend)
		var body []string
		if c.Evidence != "" {
			body = append(body, "Evidence: "+c.Evidence)
		}
		for _, p := range c.Problems {
			body = append(body, "Problem: "+p)
		}
		body = append(body, failingTests(c)...)
		u := toolCall{SessionUpdate: "tool_call", ToolCallID: checkID(e.Run, name, phase), Kind: kindExecute, Status: st, Title: title,
			RawOutput: map[string]any{"exit_code": c.ExitCode, "duration_ms": c.DurationMS, "backend": c.Backend, "phase": phase}}
		if len(body) > 0 {
			u.Content = []toolCallContent{textContent(strings.Join(body, "\n"))}
		}
		out := []any{u}
		if phase != "red" && e.Parent == "" {
			status := statusInProgress
			if passed {
				status = statusCompleted
			}
			if i, ok := t.checkAt[name]; ok && t.setPlan(i, status) {
				out = append(out, t.planLocked())
			}
		}
		return out
	}
	return nil
}

// failingTests are a check run's failing tests at their own locations
// (at most 10 lines), its flaky tests and its preflight problem.
func failingTests(c *event.CheckRun) []string {
	var out []string
	if c.Preflight != "" {
		out = append(out, "Cannot run: "+c.Preflight)
	}
	for _, l := range c.Locations {
		if l.Test == "" {
			continue
		}
		if len(out) == 10 {
			out = append(out, "(more in the trace)")
			break
		}
		out = append(out, fmt.Sprintf("Failed: %s at %s:%d: %s", l.Test, l.Path, l.Line, l.Message))
	}
	if len(c.Flaky) > 0 {
		out = append(out, "Flaky: "+strings.Join(c.Flaky, ", ")+" failed, then passed on rerun")
	}
	return out
}

func checkID(run, name, phase string) string {
	if phase == "" {
		phase = "green"
	}
	return run + "/check/" + name + "/" + phase
}

// outcome ends a sub-agent's entry, or says how the run ended.
func (t *translator) outcome(e event.Event, p *event.Outcome) []any {
	o := p.Outcome
	if e.Parent != "" {
		st := statusFailed
		if o == "unverified" || o == "verified" || o == "applied" {
			st = statusCompleted
		}
		return []any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: "agent/" + e.Run, Status: st,
			Content: []toolCallContent{textContent("Sub-agent ended: " + o)}}}
	}
	var out []any
	if t.applying[e.Run] {
		delete(t.applying, e.Run)
		st, note := statusFailed, "Not written: "+p.Error
		if o == "applied" {
			st, note = statusCompleted, "Written to the workspace."
		}
		out = append(out, toolCall{SessionUpdate: "tool_call_update", ToolCallID: e.Run + "/change", Status: st, Content: []toolCallContent{textContent(note)}})
	}
	if o == "applied" {
		changed := false
		for i := range t.plan {
			changed = t.setPlan(i, statusCompleted) || changed
		}
		if changed {
			out = append(out, t.planLocked())
		}
	}
	msg := fmt.Sprintf("Run %s ended: %s", e.Run, o)
	if s := p.Summary; s != "" {
		msg += ". " + s
	}
	if er := p.Error; er != "" && o != "applied" && o != "verified" {
		msg += " (" + er + ")"
	}
	if o == "budget_exceeded" {
		msg += fmt.Sprintf(". %s continues it from its last step with a larger budget", resumeFlags(e.Run, agent.OutcomeLimit(p)))
	}
	return append(out, chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(msg + "\n")})
}

// usageOf is a budget draw as usage_update: the tokens and dollars of the
// whole run tree against the token budget.
func usageOf(b *event.Budget) usageUpdate {
	used := b.RootTokens
	if used == 0 {
		used = b.RunTokens
	}
	u := usageUpdate{SessionUpdate: "usage_update", Used: used, Size: b.Limits().LimitTokens}
	if b.RootCostKnown {
		u.Cost = &cost{Amount: b.RootCostUSD, Currency: "USD"}
	}
	meta := map[string]any{"steps": b.Steps, "cost_known": b.RootCostKnown, "cache_read_tokens": b.RunCacheReadTokens}
	if l := b.BudgetLimits; l != nil {
		meta["limit_steps"], meta["limit_tokens"], meta["limit_cost_usd"] = l.LimitSteps, l.LimitTokens, l.LimitCostUSD
		if l.LimitWall != "" {
			meta["limit_wall"] = l.LimitWall
		}
	}
	u.Meta = map[string]any{"ioh": meta}
	return u
}

func (t *translator) locations(paths []string) []location {
	var out []location
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs := t.abs(p); abs != "" {
			out = append(out, location{Path: abs})
		}
	}
	return out
}

// abs is the absolute path of a workspace-relative one ("" when it does
// not stay inside the workspace).
func (t *translator) abs(rel string) string {
	abs, err := t.root.Resolve(rel)
	if err != nil {
		return ""
	}
	return abs
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// str, num and strs read event fields, which are Go values on a live
// event and JSON-decoded ones on a stored event.
func str(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case nil:
		return ""
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

func strs(m map[string]any, k string) []string {
	switch v := m[k].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
