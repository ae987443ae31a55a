package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// session is one ACP session: a workspace engine, the index record that
// lists its runs, the prompt in flight and the run-scoped rejections.
type session struct {
	srv *Server
	id  string
	eng *Engine
	tr  *translator

	mu        sync.Mutex
	rec       *record
	cancel    context.CancelFunc // of the prompt in flight; nil when idle
	cancelled bool
	// queued counts prompts read but not yet running (Server.admit);
	// cancelQueued is a session/cancel that came while one was queued,
	// for the next of them to take.
	queued       int
	cancelQueued bool
	rejected     map[string]bool // run|act|target rejected "always" for its run
	// trace is the W3C trace context of session/new's or session/load's
	// `_meta`, for prompts that carry none of their own.
	trace     *agent.TraceContext
	asks      int
	closeOnce sync.Once
	// runMode is the approval mode of the prompt in flight (rec.Mode
	// when it started).
	runMode string
	// modelChanged: the model was chosen anew since the last run
	// started, so the next prompt starts a run instead of following up.
	modelChanged bool
	// reopening: the engine is being replaced (changeModel).
	reopening bool
	// log and servers rebuild the engine (reopen).
	log     *slog.Logger
	servers []mcptool.Server
}

func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func (ss *session) update(u any) {
	ss.srv.conn.notify(methodSessionUpdate, sessionNotification{SessionID: ss.id, Update: u})
}

// emit is the engine's sink: each event of this session's runs becomes
// its session/update notifications, queued in order. A root run joins the
// session's record at its run_started, which the harness emits before the
// run can do anything, so a session whose agent is killed mid-run still
// lists that run.
func (ss *session) emit(e event.Event) {
	if p, ok := e.Payload.(*event.RunStarted); ok && e.Parent == "" {
		ss.recordRun(e.Run, p.Goal)
	}
	for _, u := range ss.tr.event(e) {
		ss.update(u)
	}
}

// recordRun adds a run to the session's record and writes it.
func (ss *session) recordRun(id, goal string) {
	ss.mu.Lock()
	for _, r := range ss.rec.Runs {
		if r == id {
			ss.mu.Unlock()
			return
		}
	}
	ss.rec.Runs = append(ss.rec.Runs, id)
	if ss.rec.Title == "" {
		ss.rec.Title = title(goal)
	}
	ss.rec.Updated = now()
	rec := *ss.rec
	ss.mu.Unlock()
	if err := ss.srv.idx.put(&rec); err != nil {
		ss.srv.log.Warn("acp: record session", "session", ss.id, "err", err)
	}
}

func (ss *session) busy() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.cancel != nil || ss.queued > 0
}

// cancelPrompt is session/cancel: the run in flight stops (its context
// ends, so a pending permission request is abandoned too) and the prompt
// answers stopReason cancelled. It reports whether a prompt was in flight.
func (ss *session) cancelPrompt() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.cancel == nil {
		if ss.queued > 0 {
			ss.cancelQueued = true
			return true
		}
		return false
	}
	ss.cancelled = true
	ss.cancel()
	return true
}

func (ss *session) close() {
	ss.cancelPrompt()
	ss.closeOnce.Do(func() {
		if ss.eng != nil && ss.eng.Close != nil {
			ss.eng.Close()
		}
	})
}

// prompt is session/prompt: the prompt becomes a contract, the contract
// a run, and the run's outcome the stop reason.
func (s *Server) prompt(ctx context.Context, params json.RawMessage) (any, error) {
	admitted := s.promptSession(params) // the session admit counted this prompt in
	left := false
	leave := func() (cancelled bool) { // leave the queue; callers hold admitted.mu
		left = true
		if admitted.queued > 0 { // 0: the session opened after admit looked
			admitted.queued--
		}
		cancelled, admitted.cancelQueued = admitted.cancelQueued, false
		return cancelled
	}
	defer func() {
		if admitted != nil && !left {
			admitted.mu.Lock()
			leave()
			admitted.mu.Unlock()
		}
	}()
	var p promptParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	ss := s.session(p.SessionID)
	if ss == nil {
		return nil, invalidParams("session %q is not open (session/new or session/load it first)", p.SessionID)
	}
	name, arg, isCommand := slashCommand(p.Prompt)
	var c *contract.Contract
	var refused error
	if !isCommand {
		c, refused = ss.contract(p.Prompt)
	}
	rctx, cancel := context.WithCancel(withTrace(ctx, params, ss.trace))
	defer cancel()
	ss.mu.Lock()
	if ss == admitted && leave() {
		// session/cancel came while this prompt was queued.
		ss.mu.Unlock()
		return promptResult{StopReason: stopCancelled}, nil
	}
	if ss.reopening {
		ss.mu.Unlock()
		return nil, invalidParams("session %s is switching its model: send the prompt again once session/set_config_option has answered", ss.id)
	}
	if ss.cancel != nil {
		ss.mu.Unlock()
		return nil, invalidParams("session %s already has a prompt in flight", ss.id)
	}
	ss.cancel, ss.cancelled = cancel, false
	ss.runMode = ss.rec.Mode
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		ss.cancel = nil
		ss.mu.Unlock()
	}()
	switch {
	case isCommand:
		return ss.runCommand(rctx, name, arg)
	case refused != nil:
		return ss.refuse(refused, "")
	}
	if last := ss.lastRun(); last != "" && c.Path == "" {
		if !ss.takeModelChange() {
			return ss.followUp(rctx, last, c)
		}
		ss.say("The session's model changed: this prompt starts a new run on it (a run keeps the model it started on; /runs lists the earlier ones).")
	}
	ss.update(ss.tr.startPlan(c))
	run, err := ss.eng.Harness.Start(rctx, c)
	if err != nil {
		if ss.wasCancelled() {
			// session/cancel came before the run could start.
			return promptResult{StopReason: stopCancelled}, nil
		}
		if errors.Is(err, agent.ErrConfig) {
			return ss.refuse(err, "the run did not start: ")
		}
		ss.refuse(err, "the run did not start: ")
		return nil, fmt.Errorf("start run: %w", err)
	}
	ss.recordRun(run.ID(), c.Goal) // a no-op: run_started recorded it
	return ss.finishTurn(rctx, run.Wait())
}

// finishTurn is the stop reason of a run's turn. A run its budget
// stopped is offered a larger budget first (raise.go); the run goes on in
// this turn when one is chosen.
func (ss *session) finishTurn(ctx context.Context, res *agent.Result) (promptResult, error) {
	for res.Outcome == agent.OutcomeBudgetExceeded && !ss.wasCancelled() {
		next, ok := ss.offerRaise(ctx, res)
		if !ok {
			break
		}
		res = next
	}
	return promptResult{StopReason: stopReason(res, ss.wasCancelled())}, nil
}

func (ss *session) wasCancelled() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.cancelled
}

// refuse ends a prompt that started no run: the plan is closed with the
// reason, which the agent's message repeats with how to go on.
func (ss *session) refuse(err error, prefix string) (promptResult, error) {
	msg := err.Error()
	var re *RPCError
	if errors.As(err, &re) {
		msg = re.Message
	}
	msg = strings.TrimRight(prefix+msg, ". \n")
	ss.update(ss.tr.closePlan("Refused: " + msg))
	ss.say("Refused, nothing was run: " + msg + ". Fix it and send the prompt again (/help says what a prompt may hold).")
	return promptResult{StopReason: stopRefusal}, nil
}

// admit counts a session/prompt in as it is read (admitter), so that a
// session/cancel read right behind it cancels it.
func (s *Server) admit(method string, params json.RawMessage) {
	if method != methodSessionPrompt {
		return
	}
	if ss := s.promptSession(params); ss != nil {
		ss.mu.Lock()
		ss.queued++
		ss.mu.Unlock()
	}
}

// promptSession is the open session a session/prompt's params name, read
// leniently (prompt decodes them strictly and reports what is wrong).
// admit and prompt both find the session through it.
func (s *Server) promptSession(params json.RawMessage) *session {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return s.session(p.SessionID)
}

// stopReason maps a run's outcome to ACP's stop reasons: a cancelled run
// is cancelled, a budget that ran out is max_tokens (max_turn_requests
// for the step budget), a run that ended on denied acts is a refusal;
// everything else ended its turn (the outcome message says how).
func stopReason(res *agent.Result, cancelled bool) string {
	switch {
	case cancelled || res.Outcome == agent.OutcomeCancelled:
		return stopCancelled
	case res.Outcome == agent.OutcomeBudgetExceeded:
		if res.StopLimit() == agent.LimitSteps {
			return stopMaxTurns
		}
		return stopMaxTokens
	case res.Outcome == agent.OutcomeDenied:
		return stopRefusal
	}
	return stopEndTurn
}

// contract reads a prompt: a resource link to a task file makes that file
// the contract; otherwise the text is the goal, other linked workspace
// files its context and embedded resources part of it, with the
// project's own test command as the check.
func (ss *session) contract(blocks []contentBlock) (*contract.Contract, error) {
	root := ss.eng.Root.Dir()
	var goal []string
	var context []string
	for i, b := range blocks {
		switch b.Type {
		case "text":
			if t := strings.TrimSpace(b.Text); t != "" {
				goal = append(goal, t)
			}
		case "resource_link":
			path, err := filePath(b.URI)
			if err != nil {
				return nil, invalidParams("prompt[%d]: %v", i, err)
			}
			if isTaskFile(path) {
				// The run works in the session's workspace, which the
				// contract's paths are relative to: its task file is there.
				// The file read is the one judged: resolved through the
				// workspace (a symlink out of it is refused), not the link.
				_, real, err := resolveIn(ss.eng.Root, path)
				if err != nil {
					return nil, invalidParams("prompt[%d]: task file %s is outside the session's workspace %s", i, path, root)
				}
				c, err := contract.Load(real)
				if err != nil {
					return nil, invalidParams("prompt[%d]: task file: %v", i, err)
				}
				return c, nil
			}
			// Judged as the run will read it: resolved through the
			// workspace, so a link inside that leads out is refused here,
			// not dropped silently when the context is read.
			rel, _, err := resolveIn(ss.eng.Root, path)
			if err != nil {
				return nil, invalidParams("prompt[%d]: %s is outside the session's workspace %s (link files inside it, or open a session there)", i, path, root)
			}
			context = append(context, filepath.ToSlash(rel))
		case "resource":
			if b.Resource != nil && b.Resource.Text != "" {
				goal = append(goal, fmt.Sprintf("Attached %s:\n%s", b.Resource.URI, b.Resource.Text))
			}
		default:
			return nil, invalidParams("prompt[%d]: content of type %q is not supported (text, resource_link, resource)", i, b.Type)
		}
	}
	if len(goal) == 0 {
		return nil, invalidParams("the prompt has no text and links no task file")
	}
	doc := map[string]any{"version": 1, "goal": strings.Join(goal, "\n\n")}
	if len(context) > 0 {
		doc["context"] = context
	}
	if checks := contract.ProjectChecks(root); len(checks) > 0 {
		doc["verify"] = map[string]any{"checks": checks}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode prompt contract: %w", err)
	}
	c, err := contract.Parse(raw, "acp prompt")
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	return c, nil
}

// resolveIn is the workspace-relative name and the real location of the
// file at path (a task file, a linked context file), which must lie
// inside root once every symlink is resolved.
func resolveIn(root *workspace.Root, path string) (rel, real string, err error) {
	if rel, err = root.Rel(path); err != nil {
		return "", "", err
	}
	real, err = root.Resolve(rel)
	return rel, real, err
}

// filePath is the local path of a file: URI.
func filePath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("resource link %q: only file: URIs are read", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("resource link %q: a file on another host", uri)
	}
	p := filepath.FromSlash(u.Path)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("resource link %q: not an absolute path", uri)
	}
	return filepath.Clean(p), nil
}

// isTaskFile: files named *.ioh.yaml (or .yml, .json) and files under
// .ioh/tasks/ are task contracts (docs/contract.md).
func isTaskFile(path string) bool {
	base := filepath.Base(path)
	for _, ext := range []string{".ioh.yaml", ".ioh.yml", ".ioh.json"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return strings.Contains(filepath.ToSlash(path), "/.ioh/tasks/")
}

func title(goal string) string {
	t, _, _ := strings.Cut(strings.TrimSpace(goal), "\n")
	if len(t) > 80 {
		t = t[:77] + "…"
	}
	return t
}

// replay is session/load's history: for each run of the session, the
// user's goal, the plan and every stored event, translated as they were
// live.
func (ss *session) replay(ctx context.Context) error {
	ss.mu.Lock()
	runs := append([]string(nil), ss.rec.Runs...)
	ss.mu.Unlock()
	for _, id := range runs {
		hs := ss.eng.Harness.History()
		row, err := hs.Run(ctx, id)
		if err != nil {
			return fmt.Errorf("load run %s: %w", id, err)
		}
		tr := newTranslator(ss.eng.Root, false)
		events, err := hs.TreeEvents(ctx, id)
		if err != nil {
			return fmt.Errorf("load run %s: %w", id, err)
		}
		if !followsAnother(events) {
			// A linked run's first turn is its user_turn event.
			ss.update(chunkUpdate{SessionUpdate: "user_message_chunk", Content: textBlock(row.Goal)})
		}
		if row.Contract != nil {
			ss.update(tr.startPlan(row.Contract))
		}
		for _, e := range events {
			for _, u := range tr.event(e) {
				ss.update(u)
			}
		}
		if note := unfinished(row.RunID, string(row.Shown), string(row.Outcome)); note != "" {
			ss.update(chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(note)})
		}
	}
	return nil
}

// followsAnother: the run continues the conversation of an earlier one
// (its user_turn names the run it follows).
func followsAnother(events []event.Event) bool {
	for _, e := range events {
		if u, ok := e.Payload.(*event.UserTurn); ok && e.Parent == "" && u.Follows != "" {
			return true
		}
	}
	return false
}

// unfinished says how to go on with a run that did not end: one whose
// process died (interrupted), one still driven elsewhere, one waiting
// for an answer.
func unfinished(id, shown, stored string) string {
	switch {
	case shown == string(agent.OutcomeInterrupted):
		return fmt.Sprintf("Run %s was interrupted before it ended; `ioh-lsp resume %s` continues it from its last step.\n", id, id)
	case stored == string(agent.OutcomeRunning):
		return fmt.Sprintf("Run %s is still running in another process.\n", id)
	case stored == string(agent.OutcomeAwaitingApproval):
		return fmt.Sprintf("Run %s waits for an answer: `ioh-lsp approve %s` or `ioh-lsp reject %s`, then `ioh-lsp resume %s`.\n", id, id, id, id)
	}
	return ""
}
