package acp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
)

// Slash commands: a prompt whose text starts with /name is answered in
// the panel by the session (available_commands_update lists them); it
// never becomes the goal of a new run.

type availableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

type availableCommandsUpdate struct {
	SessionUpdate     string             `json:"sessionUpdate"`
	AvailableCommands []availableCommand `json:"availableCommands"`
}

// command is one slash command: what it says in the panel and what it
// does with the text after its name.
type command struct {
	name, desc, hint string
	do               func(ss *session, ctx context.Context, arg string) (string, error)
}

// commands is the command table (a function: /help reads it too).
func commands() []command {
	return []command{
		{"help", "What the panel's prompts, modes and commands do", "", (*session).cmdHelp},
		{"runs", "The session's runs and the workspace's recent ones, with their outcomes", "", (*session).cmdRuns},
		{"diff", "The change of a run as a unified diff (default: the session's last run)", "RUN_ID (optional)", (*session).cmdDiff},
		{"approve", "Write a run's pending change, or allow the act it waits on and continue it", "RUN_ID (optional)", (*session).cmdApprove},
		{"reject", "Drop a run's pending change, or deny the act it waits on", "RUN_ID and a reason (optional)", (*session).cmdReject},
		{"resume", "Continue a run that stopped (interrupted, waiting on an act, its provider failed) from its last step", "RUN_ID (optional)", (*session).cmdResume},
		{"undo", "Put back what a run's applied change replaced, keeping later edits that do not overlap it", "RUN_ID (optional)", (*session).cmdUndo},
	}
}

// opened tells the client what the session offers once it is open.
func (ss *session) opened() {
	var list []availableCommand
	for _, c := range commands() {
		ac := availableCommand{Name: c.name, Description: c.desc}
		if c.hint != "" {
			ac.Input = &commandInput{Hint: c.hint}
		}
		list = append(list, ac)
	}
	ss.update(availableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: list})
}

var commandPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/([a-z][a-z-]*)(?:\s+(.*))?$`) })

// slashCommand reads a prompt as a command: its first block is text
// starting with /name. ok is false for any other prompt.
func slashCommand(blocks []contentBlock) (name, arg string, ok bool) {
	if len(blocks) == 0 || blocks[0].Type != "text" {
		return "", "", false
	}
	m := commandPattern().FindStringSubmatch(strings.TrimSpace(blocks[0].Text))
	if m == nil {
		return "", "", false
	}
	return m[1], strings.TrimSpace(m[2]), true
}

// runCommand answers a slash command in the panel: its text as the
// agent's message, end_turn; a failure says what went wrong and how to
// go on, and the turn ends the same way.
func (ss *session) runCommand(ctx context.Context, name, arg string) (promptResult, error) {
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		text, err := c.do(ss, ctx, arg)
		if err != nil {
			text = fmt.Sprintf("/%s: %v", name, err)
		}
		if ctx.Err() != nil {
			return promptResult{StopReason: stopCancelled}, nil
		}
		ss.say(text)
		return promptResult{StopReason: stopEndTurn}, nil
	}
	ss.say(fmt.Sprintf("/%s is not a command of this agent: /help lists them. To give a goal that starts with a slash, put a word before it.", name))
	return promptResult{StopReason: stopEndTurn}, nil
}

// say sends one agent message.
func (ss *session) say(text string) {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	ss.update(chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(text)})
}

func (ss *session) cmdHelp(context.Context, string) (string, error) {
	var b strings.Builder
	b.WriteString("A prompt is a goal: the agent changes the code, verifies the change in the sandbox with the project's checks and asks before writing it. Link a task file (*.ioh.yaml) to run that contract instead; other linked files become its context. Once the session has a run, a text prompt follows up on it: the model sees the earlier turns and the change so far.\n\n")
	b.WriteString("Modes (the approval policy): ask asks in the panel; auto writes a verified change without asking and denies Ask-tier acts; never writes nothing and leaves the change pending for /approve.\n\nCommands (none of them starts a new run):\n")
	for _, c := range commands() {
		arg := ""
		if c.hint != "" {
			arg = " [" + c.hint + "]"
		}
		fmt.Fprintf(&b, "- /%s%s: %s\n", c.name, arg, c.desc)
	}
	return b.String(), nil
}

func (ss *session) cmdRuns(ctx context.Context, _ string) (string, error) {
	rows, err := ss.eng.Harness.History().Runs(ctx)
	if err != nil {
		return "", err
	}
	ss.mu.Lock()
	mine := map[string]bool{}
	for _, id := range ss.rec.Runs {
		mine[id] = true
	}
	ss.mu.Unlock()
	var lines []string
	for i := len(rows) - 1; i >= 0 && len(lines) < 20; i-- {
		r := rows[i]
		if r.Parent != "" {
			continue
		}
		where := "elsewhere"
		if mine[r.RunID] {
			where = "this session"
		}
		lines = append(lines, fmt.Sprintf("- %s %s (%s, %s): %s", r.RunID, r.Shown, where, r.Started.UTC().Format(time.RFC3339), title(r.Goal)))
	}
	if len(lines) == 0 {
		return "No runs in this workspace yet: a prompt starts one.", nil
	}
	return "Runs of this workspace, newest first (/diff, /approve, /resume and /undo take an id):\n" + strings.Join(lines, "\n"), nil
}

// target is the run a command names, else the session's last run.
func (ss *session) target(arg string) (string, string, error) {
	id, rest, _ := strings.Cut(arg, " ")
	if strings.HasPrefix(id, "r-") {
		return id, strings.TrimSpace(rest), nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if n := len(ss.rec.Runs); n > 0 {
		return ss.rec.Runs[n-1], arg, nil
	}
	return "", arg, errors.New("this session has no run yet: give a run id (/runs lists them)")
}

func (ss *session) cmdDiff(ctx context.Context, arg string) (string, error) {
	id, _, err := ss.target(arg)
	if err != nil {
		return "", err
	}
	hs := ss.eng.Harness.History()
	row, err := hs.Run(ctx, id)
	if err != nil {
		return "", err
	}
	cs, err := hs.Changes(row)
	if err != nil {
		return "", err
	}
	if cs == nil {
		return fmt.Sprintf("Run %s changed no file.", id), nil
	}
	var b strings.Builder
	for _, ch := range cs.Changes() {
		b.WriteString(cs.DiffFile(ch.Path))
	}
	if b.Len() == 0 {
		if row.Outcome == agent.OutcomeApplied {
			return fmt.Sprintf("Run %s's change is applied: the workspace holds it (git diff shows it; /undo puts back what it replaced).", id), nil
		}
		return fmt.Sprintf("Run %s's change makes no difference to the workspace as it is now.", id), nil
	}
	return fmt.Sprintf("Run %s (%s), against the workspace as it is now:\n\n```diff\n%s```", id, row.Outcome, b.String()), nil
}

func (ss *session) cmdApprove(ctx context.Context, arg string) (string, error) {
	id, _, err := ss.target(arg)
	if err != nil {
		return "", err
	}
	return ss.answer(ctx, id, agent.Decision{Answer: agent.AllowOnce})
}

func (ss *session) cmdReject(ctx context.Context, arg string) (string, error) {
	id, reason, err := ss.target(arg)
	if err != nil {
		return "", err
	}
	if reason == "" {
		reason = "rejected in the panel"
	}
	return ss.answer(ctx, id, agent.Decision{Answer: agent.Deny, Reason: reason})
}

// answer gives d to what run id waits on: its pending change (written,
// or dropped), or the act it asked about (then the run goes on).
func (ss *session) answer(ctx context.Context, id string, d agent.Decision) (string, error) {
	waiting, err := ss.eng.Harness.Waiting(ctx, id)
	if err != nil {
		return "", err
	}
	allow := d.Answer != agent.Deny
	switch {
	case waiting == "change" && allow:
		return ss.writeChange(ctx, id)
	case waiting == "change":
		if _, err := ss.eng.Harness.Reject(ctx, id, d.Reason); err != nil {
			return "", err
		}
		ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id + "/change", Status: statusFailed,
			Content: []toolCallContent{textContent("Dropped with /reject: nothing was written.")}})
		return fmt.Sprintf("Run %s's change is dropped; nothing was written.", id), nil
	case waiting == "act":
		if _, err := ss.eng.Harness.AnswerAct(ctx, id, d); err != nil {
			return "", err
		}
		what := "allowed the act it waited on"
		if !allow {
			what = "denied the act it waited on"
		}
		return ss.continueRun(ctx, id, what)
	}
	return "", fmt.Errorf("run %s waits on nothing (/runs shows its outcome)", id)
}

// writeChange applies run id's pending change.
func (ss *session) writeChange(ctx context.Context, id string) (string, error) {
	ss.tr.expectOutcome(id)
	res, err := ss.eng.Harness.Approve(ctx, id)
	if err != nil {
		return "", err
	}
	if res.Outcome != agent.OutcomeApplied {
		return fmt.Sprintf("Run %s: nothing was written (%s): %v. Change the overlapping lines and /approve again, or /reject.", id, res.Outcome, res.Err), nil
	}
	return fmt.Sprintf("Run %s's change is written. /undo %s puts back what it replaced.", id, id), nil
}

func (ss *session) cmdResume(ctx context.Context, arg string) (string, error) {
	id, _, err := ss.target(arg)
	if err != nil {
		return "", err
	}
	return ss.continueRun(ctx, id, "resumed")
}

// continueRun resumes run id in this session and waits for it; its
// events reach the panel as a prompt's do.
func (ss *session) continueRun(ctx context.Context, id, what string) (string, error) {
	row, err := ss.eng.Harness.History().Run(ctx, id)
	if err != nil {
		return "", err
	}
	ss.recordRun(id, row.Goal)
	run, err := ss.eng.Harness.Resume(ctx, id)
	if err != nil {
		if errors.Is(err, agent.ErrLeased) {
			return "", fmt.Errorf("run %s is driven by another process now; wait for it to end (/runs)", id)
		}
		return "", err
	}
	res := run.Wait()
	ended := res.Outcome == row.Outcome && res.Steps == row.Steps
	for res.Outcome == agent.OutcomeBudgetExceeded && ctx.Err() == nil {
		// A run its budget stopped goes on only with a larger budget.
		next, ok := ss.offerRaise(ctx, res)
		if !ok {
			break
		}
		res, ended = next, false
	}
	if ended {
		return fmt.Sprintf("Run %s had already ended (%s): nothing to continue. A new prompt starts a new run.", id, row.Outcome), nil
	}
	return fmt.Sprintf("Run %s %s and ended: %s.", id, what, res.Outcome), nil
}

func (ss *session) cmdUndo(ctx context.Context, arg string) (string, error) {
	id, _, err := ss.target(arg)
	if err != nil {
		return "", err
	}
	res, err := ss.eng.Harness.Undo(ctx, id)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Run %s undone: %s put back as they were before it.", id, strings.Join(res.Files, ", "))
	if len(res.Merged) > 0 {
		msg += " Your later edits to " + strings.Join(res.Merged, ", ") + " were kept."
	}
	return msg, nil
}
