// Package api declares the ioh.* commands of workspace/executeCommand
// once (docs/lsp.md#commands): each command's name, argument type, result
// type and doc, as gopls declares its command interface. The server's
// dispatch decodes arguments through Spec.Decode and lists All in its
// initialize result; schema/commands.schema.json is generated from the
// same declarations (internal/schemagen), so the editors' tests check
// their payloads against exactly what the server reads.
//
// The argument rule: a field is required unless its json tag says
// omitempty; a required string must not be empty. Unknown fields are
// ignored by the server but refused by the schema (a client must not send
// them).
package api

import (
	"encoding/json"
	"reflect"

	"go.lsp.dev/protocol"
)

// Spec is one command: Decode reads its argument into A; its handler
// returns R.
type Spec[A, R any] struct {
	Name string
	Doc  string
	// NoArgument: the command takes no argument (ioh.runs).
	NoArgument bool
}

// Info is a command as the dispatch and the schema see it.
type Info struct {
	Name       string
	Doc        string
	Args       reflect.Type
	Result     reflect.Type
	NoArgument bool
	decodeNil  func() error
}

// NeedsArgument reports whether the command is refused without an
// argument (asked of Decode, so it cannot disagree with it).
func (i Info) NeedsArgument() bool { return i.decodeNil() != nil }

// Info describes c. It does no work beyond naming the types: All is built
// on every start of the binary.
func (c Spec[A, R]) Info() Info {
	return Info{Name: c.Name, Doc: c.Doc, Args: reflect.TypeFor[A](), Result: reflect.TypeFor[R](),
		NoArgument: c.NoArgument, decodeNil: func() error { _, err := c.Decode(nil); return err }}
}

// RunRef is {runId}: the argument of commands about one run and the
// result of those that start one.
type RunRef struct {
	RunID string `json:"runId" doc:"the run's id (r-…)"`
}

// RunArgs is ioh.run's argument: exactly one of contract and inline.
type RunArgs struct {
	Contract string          `json:"contract,omitempty" doc:"a task file: a path (relative to the first workspace folder) or a file: URI; an open buffer wins over the disk"`
	Inline   json.RawMessage `json:"inline,omitempty" doc:"a task contract object (schema/task.schema.json)" schema:"object"`
}

// Check refuses neither or both of contract and inline.
func (a RunArgs) Check() error {
	inline := len(a.Inline) > 0 && string(a.Inline) != "null"
	switch {
	case a.Contract != "" && len(a.Inline) > 0:
		return &ArgError{Msg: "give contract or inline, not both"}
	case a.Contract == "" && !inline:
		return &ArgError{Msg: `missing "contract" or "inline"`}
	}
	return nil
}

// SchemaExtra says the same as Check in JSON Schema.
func (RunArgs) SchemaExtra() map[string]any {
	return map[string]any{"oneOf": []any{
		map[string]any{"required": []any{"contract"}, "properties": map[string]any{"contract": map[string]any{"type": "string", "minLength": 1}}},
		map[string]any{"required": []any{"inline"}, "properties": map[string]any{"inline": map[string]any{"type": "object"}}},
	}}
}

// AskArgs is ioh.ask's argument.
type AskArgs struct {
	Goal  string          `json:"goal" doc:"what the agent should do"`
	URI   string          `json:"uri,omitempty" doc:"the document asked about (its file becomes the task's context)"`
	Range *protocol.Range `json:"range,omitempty" doc:"the selection in that document"`
	RunID string          `json:"runId,omitempty" doc:"a follow-up: the run whose conversation the goal continues (its pending change, its earlier turns)"`
}

// ApproveArgs is ioh.approve's argument.
type ApproveArgs struct {
	RunID  string `json:"runId" doc:"the run whose pending change (or deferred act) is approved"`
	ForRun bool   `json:"forRun,omitempty" doc:"a deferred act: allow it for the rest of the run, not once"`
}

// RejectArgs is ioh.reject's argument.
type RejectArgs struct {
	RunID  string `json:"runId" doc:"the run whose pending change (or deferred act) is refused"`
	Reason string `json:"reason,omitempty" doc:"why; a denied act's reason is shown to the model"`
}

// ResumeArgs is ioh.resume's argument.
type ResumeArgs struct {
	RunID  string       `json:"runId" doc:"the run to continue"`
	Budget *BudgetRaise `json:"budget,omitempty" doc:"raises the run's limits (each may only raise); without it a run its budget stopped asks how much more"`
}

// BudgetRaise is ioh.resume's budget: each field optional, at least one
// given.
type BudgetRaise struct {
	Steps   int     `json:"steps,omitempty" doc:"step limit"`
	Tokens  int64   `json:"tokens,omitempty" doc:"token limit"`
	CostUSD float64 `json:"cost_usd,omitempty" doc:"dollar limit"`
	Wall    string  `json:"wall,omitempty" doc:"wall-time limit, a Go duration such as 30m"`
}

// ClearTraceArgs is ioh.clearTrace's argument.
type ClearTraceArgs struct {
	RunID string `json:"runId,omitempty" doc:"the run whose diagnostics are removed; absent: every run's"`
}

// AllowOnceArgs is ioh.allowOnce's argument.
type AllowOnceArgs struct {
	RunID  string `json:"runId" doc:"the run an act of which was denied"`
	Act    string `json:"act" doc:"the denied act: read, write, exec or net"`
	Target string `json:"target" doc:"the denied act's target (path, command or host)"`
}

// NoArgs is the argument of a command that takes none.
type NoArgs struct{}

// Decided is what ioh.approve and ioh.reject return: {runId, outcome} for
// a pending change, {runId, answer, resumed: true} for a deferred act.
type Decided struct {
	RunID   string `json:"runId"`
	Outcome string `json:"outcome,omitempty" doc:"the run's outcome after the decision (docs/contract.md#outcomes)"`
	Answer  string `json:"answer,omitempty" doc:"the answer recorded for a deferred act"`
	Resumed bool   `json:"resumed,omitempty" doc:"the run continued with the answer"`
}

// Cancelled is ioh.cancel's result.
type Cancelled struct {
	RunID     string `json:"runId"`
	Cancelled bool   `json:"cancelled" doc:"false when the run had already ended"`
}

// Resumed is ioh.resume's result.
type Resumed struct {
	RunID   string `json:"runId"`
	Resumed *bool  `json:"resumed,omitempty" doc:"false when the user declined the budget question; absent when the run continues"`
}

// Cleared is ioh.clearTrace's result.
type Cleared struct {
	Cleared string `json:"cleared" doc:"the run whose diagnostics were removed; empty: every run's"`
}

// Diff is ioh.showDiff's result.
type Diff struct {
	RunID string `json:"runId"`
	Diff  string `json:"diff" doc:"the pending (or last proposed) change as a unified diff"`
}

// RunInfo is one entry of ioh.runs: a run's spend (sub-agents included)
// and the limits it is spent against.
type RunInfo struct {
	RunID   string `json:"runId"`
	Goal    string `json:"goal"`
	Outcome string `json:"outcome" doc:"docs/contract.md#outcomes, running or interrupted"`
	Steps   int    `json:"steps"`
	Tokens  int64  `json:"tokens"`
	// CostUSD is null when a call could not be priced: the cost is
	// unknown, not $0.
	CostUSD *float64 `json:"costUsd" doc:"null when a call could not be priced (unknown, not $0)"`
	// Limits is the run's budget (raised by a resume, if it was); nil
	// when unknown, an absent field unlimited.
	Limits  *RunLimits `json:"limits,omitempty" doc:"the run's budget; an absent field is unlimited"`
	Started string     `json:"started" doc:"RFC 3339, UTC"`
}

// RunLimits is a run's budget in ioh.runs.
type RunLimits struct {
	Steps   int     `json:"steps,omitempty"`
	Tokens  int64   `json:"tokens,omitempty"`
	CostUSD float64 `json:"costUsd,omitempty"`
	Wall    string  `json:"wall,omitempty" doc:"a Go duration"`
}

// TraceSummary is ioh.trace's result: the run's ioh.runs entry and a
// summary of its trace.
type TraceSummary struct {
	RunInfo
	Events  int            `json:"events" doc:"how many trace events the run has"`
	Types   map[string]int `json:"types" doc:"the number of events of each type"`
	Summary string         `json:"summary,omitempty" doc:"the run's final summary"`
	File    string         `json:"file,omitempty" doc:"the rendered markdown trace, opened with window/showDocument where supported"`
}

// The commands, in the order initialize lists them.
var (
	Run = Spec[RunArgs, RunRef]{Name: "ioh.run",
		Doc: "Start a run of a task file or an inline contract; returns at once with its id."}
	Ask = Spec[AskArgs, RunRef]{Name: "ioh.ask",
		Doc: "Start a run from a goal, with the document (and selection) as context and the project's own tests as the check; with runId, send the goal as a follow-up in that run's conversation."}
	Approve = Spec[ApproveArgs, Decided]{Name: "ioh.approve",
		Doc: "Apply a run's pending change, or allow its deferred act and let it continue."}
	Reject = Spec[RejectArgs, Decided]{Name: "ioh.reject",
		Doc: "Drop a run's pending change, or deny its deferred act (the model sees the reason) and let it continue."}
	Cancel = Spec[RunRef, Cancelled]{Name: "ioh.cancel",
		Doc: "Cancel a run of this session."}
	Resume = Spec[ResumeArgs, Resumed]{Name: "ioh.resume",
		Doc: "Continue an interrupted or deferred run, or one its budget stopped (with a larger budget)."}
	Trace = Spec[RunRef, TraceSummary]{Name: "ioh.trace",
		Doc: "Summarise a run's trace and open it rendered as markdown."}
	Runs = Spec[NoArgs, []RunInfo]{Name: "ioh.runs", NoArgument: true,
		Doc: "List the workspace's runs with their spend and limits."}
	ClearTrace = Spec[ClearTraceArgs, Cleared]{Name: "ioh.clearTrace",
		Doc: "Remove a run's diagnostics (every run's without runId)."}
	ShowDiff = Spec[RunRef, Diff]{Name: "ioh.showDiff",
		Doc: "Show a run's pending (or last proposed) change as a unified diff."}
	AllowOnce = Spec[AllowOnceArgs, RunRef]{Name: "ioh.allowOnce",
		Doc: "Run a task again, on the same engine, with one denied act allowed once, over any rule of the user, editor, workspace or task (a protected path stays denied)."}
)

// All lists every command, in the order initialize advertises them.
var All = []Info{
	Run.Info(), Ask.Info(), Approve.Info(), Reject.Info(), Cancel.Info(), Resume.Info(),
	Trace.Info(), Runs.Info(), ClearTrace.Info(), ShowDiff.Info(), AllowOnce.Info(),
}

// Names returns the command names in All's order.
func Names() []string {
	out := make([]string, len(All))
	for i, c := range All {
		out[i] = c.Name
	}
	return out
}
