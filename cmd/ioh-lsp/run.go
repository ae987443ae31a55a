package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// runFlags are the flags shared by run and resume (docs/cli.md#run).
type runFlags struct {
	provider, model, cassette, record, approve string
	json                                       bool
	// raise is resume's larger budget (--budget-steps, --budget-tokens,
	// --budget-usd, --budget-wall); zero fields keep the run's limits.
	raise contract.Budget
}

// registerRaise adds resume's budget flags: each may only raise the
// run's limit (the harness refuses a lower one as a usage error).
func (f *runFlags) registerRaise(fs *flag.FlagSet) {
	fs.IntVar(&f.raise.Steps, "budget-steps", 0, "continue with a step budget of `N` (only raises)")
	fs.Int64Var(&f.raise.Tokens, "budget-tokens", 0, "continue with a token budget of `N` (only raises)")
	fs.Float64Var(&f.raise.CostUSD, "budget-usd", 0, "continue with a dollar budget of `X` (only raises)")
	fs.DurationVar(&f.raise.Wall, "budget-wall", 0, "continue with a wall budget of `D`, measured from the run's first start (only raises)")
}

func (f *runFlags) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&f.provider, "provider", "", "model provider `P`: anthropic, openai, openrouter, openai-compatible, replay")
	fs.StringVar(&f.model, "model", "", "model name `M`")
	fs.StringVar(&f.cassette, "cassette", "", "replay cassette `F` (selects the replay provider)")
	fs.StringVar(&f.record, "record", "", "record the model's turns into the cassette `F`")
	fs.StringVar(&f.approve, "approve", "", "`MODE`: ask (terminal prompts), auto (apply a verified change), never (leave it pending); default from the user config, else ask")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per event on stdout and a final summary")
}

func (f *runFlags) check() error {
	switch f.approve {
	case "", "ask", "auto", "never":
		return nil
	}
	return fmt.Errorf("bad --approve %q (want ask, auto or never)", f.approve)
}

// parseRunArgs parses the flags shared by run and resume and their one
// positional argument; when ok is false the command exits with code.
func parseRunArgs(env *cliEnv, cmd, arg string, args []string) (f *runFlags, pos []string, code int, ok bool) {
	f = new(runFlags)
	fs := newFlagSet(cmd+" "+arg, env.stderr)
	f.register(fs)
	var last *bool
	if cmd == "resume" {
		f.registerRaise(fs)
		last = addLast(fs)
	}
	pos, err := parseFlags(fs, args)
	if err == nil && last != nil {
		var id string
		if id, err = runArg(pos, *last); err == nil {
			pos = []string{id} // "" is --last
		}
	} else if err == nil {
		err = wantArgs(pos, 1, 1)
	}
	if err == nil {
		err = f.check()
	}
	if err == nil && (f.raise.Steps < 0 || f.raise.Tokens < 0 || f.raise.CostUSD < 0 || f.raise.Wall < 0 || math.IsNaN(f.raise.CostUSD) || math.IsInf(f.raise.CostUSD, 0)) {
		err = errors.New("a --budget-* value must be positive")
	}
	if err != nil {
		return nil, nil, usageError(env, cmd, err), false
	}
	return f, pos, 0, true
}

// cmdRun runs a task contract headless in the workspace holding it.
func cmdRun(ctx context.Context, env *cliEnv, args []string) int {
	env, g := guardOutput(env)
	f, pos, code, ok := parseRunArgs(env, "run", "FILE", args)
	if !ok {
		return code
	}
	c, err := contract.Load(pos[0])
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp run: %v\n", err)
		return exitUsage
	}
	cwd, _ := os.Getwd()
	return drive(ctx, env, g, f, wire.FindRoot(pos[0], cwd), func(ctx context.Context, h *agent.Harness) (*agent.Run, error) {
		return h.Start(ctx, c)
	})
}

// cmdResume continues an interrupted or deferred run of the workspace at
// the current directory.
func cmdResume(ctx context.Context, env *cliEnv, args []string) int {
	env, g := guardOutput(env)
	f, pos, code, ok := parseRunArgs(env, "resume", "RUN_ID", args)
	if !ok {
		return code
	}
	id, err := resolveRun(ctx, env, pos[0])
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp resume: %v\n", err)
		return runErrorExit(err)
	}
	cwd, _ := os.Getwd()
	return drive(ctx, env, g, f, wire.FindRoot(cwd, cwd), func(ctx context.Context, h *agent.Harness) (*agent.Run, error) {
		return h.ResumeWith(ctx, id, f.raise)
	})
}

// drive builds the harness, starts the run and waits for its outcome.
// env's streams go through g (guardOutput), which also learns the
// credentials of the configured URLs and the harness's secrets.
func drive(ctx context.Context, env *cliEnv, g *outGuard, f *runFlags, root string, start func(context.Context, *agent.Harness) (*agent.Run, error)) int {
	g.printsJSON(f.json)
	if err := config.CheckWorkspace(root, env.getenv); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp: %v\n", err)
		return exitUsage
	}
	// The run's events, the logger (ignored settings first of all), the
	// terminal approver and the lines below write from several goroutines:
	// one lock keeps each write whole and in order.
	st := startStatus(env, g)
	defer st.stop()
	sw := st.writer(env.stderr)
	stderr := &lockedWriter{w: sw}
	out := &cliSink{stderr: stderr, status: st, text: turnText{out: &sw}}
	if f.json {
		out.stdout = env.stdout
	}
	cfg, err := wire.LoadConfig(root, env.getenv, nil)
	if err != nil {
		fmt.Fprintf(stderr, "ioh-lsp: %v\n", err)
		return exitUsage
	}
	configured := g.addConfigured(cfg)
	mode := f.approve
	if mode == "" {
		mode = cfg.Approve
	}
	appr, err := approve.ForMode(mode, env.stdin, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ioh-lsp: %v\n", err)
		return exitUsage
	}
	appr = statusApprover{Approver: appr, st: st}
	for _, p := range []*string{&f.cassette, &f.record} {
		if *p != "" {
			if abs, err := filepath.Abs(*p); err == nil {
				*p = abs
			}
		}
	}
	eng, err := wire.NewHarness(ctx, wire.Options{
		Root: root, Getenv: env.getenv, Approver: appr, Sink: out, Logger: cliLogger(stderr), Config: cfg,
		Overrides: wire.Overrides{Provider: f.provider, Model: f.model, Cassette: f.cassette, Record: f.record},
	})
	if err != nil {
		fmt.Fprintf(stderr, "ioh-lsp: %v\n", err)
		return errorExit(err, exitFailed)
	}
	defer eng.Close()
	g.add(eng.Harness.Redactor())
	eng.Harness.AddConfigured(configured)
	warnRecovered(stderr, eng.Harness.History().Recovered())
	run, err := start(ctx, eng.Harness)
	if err != nil {
		fmt.Fprintf(stderr, "ioh-lsp: %v\n", err)
		return errorExit(err, exitFailed)
	}
	fmt.Fprintf(stderr, "run %s in %s\n", run.ID(), eng.Root.Dir())
	res := run.Wait()
	code := res.Outcome.ExitCode()
	if res.Pending && mode == "never" {
		code = exitOK // a change left pending on purpose (docs/cli.md#exit-codes-of-run-and-resume)
	}
	st.stop()
	out.summary(res, code)
	return code
}

// startStatus starts the status line on the command's stderr: live on a
// terminal, plain lines elsewhere.
func startStatus(env *cliEnv, g *outGuard) *statusLine {
	raw := env.stderr
	if gw, ok := raw.(*guardedWriter); ok {
		raw = gw.w // the line's own escapes pass; its text is cleaned below
	}
	clean := func(s string) string { return g.clean(s, true) }
	return newStatusLine(raw, liveTerminal(raw, env.getenv), env.getenv("NO_COLOR") == "", clean)
}

// plural is "1 step", "2 steps".
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// cliLogger logs warnings and errors to stderr, one line each, as a
// person reads them: "ioh-lsp: warning: MSG key=value".
func cliLogger(w io.Writer) *slog.Logger { return slog.New(cliHandler{w: w}) }

// cliHandler is the slog handler behind cliLogger.
type cliHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func (h cliHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h cliHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("ioh-lsp: ")
	if r.Level >= slog.LevelError {
		b.WriteString("error: ")
	} else {
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	b.WriteByte('\n')
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h cliHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return cliHandler{w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h cliHandler) WithGroup(string) slog.Handler { return h }

// cliSink prints progress on stderr and, with --json, every event as one
// JSON object a line on stdout. Events arrive from parallel tool calls.
type cliSink struct {
	mu     sync.Mutex
	stderr io.Writer
	stdout io.Writer   // nil without --json
	status *statusLine // nil: none
	text   turnText    // the model's text as it streams in
}

func (s *cliSink) Emit(e event.Event) {
	if s.status != nil {
		s.status.observe(e)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stdout != nil {
		if b, err := json.Marshal(e); err == nil {
			s.stdout.Write(append(b, '\n'))
		}
	}
	if line := s.text.line(e); line != "" {
		fmt.Fprintln(s.stderr, line)
	}
}

func (s *cliSink) summary(res *agent.Result, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cost := fmt.Sprintf("$%.4f", res.CostUSD)
	if res.Unpriced > 0 {
		cost = fmt.Sprintf("cost unknown (%d calls unpriced)", res.Unpriced)
	}
	msg := fmt.Sprintf("%s: %s after %s, %s, %s", res.RunID, res.Outcome, plural(res.Steps, "step"), plural(res.Usage.Total(), "token"), cost)
	if res.Err != nil && res.Outcome != agent.OutcomeApplied && res.Outcome != agent.OutcomeVerified {
		msg += " (" + res.Err.Error() + ")"
	}
	if res.Network != "" {
		msg += "\n" + res.Network
	}
	for _, e := range res.Report.Evidence() {
		msg += "\n  " + e
	}
	if res.Report.NeedsHuman() {
		msg += "\nthe change touches its own checks, so it waits for a human review:\n  " + strings.Join(res.Report.TouchesChecks, "\n  ")
	}
	if res.Pending {
		msg += fmt.Sprintf("\nthe change is pending: ioh-lsp approve %s | ioh-lsp reject %s", res.RunID, res.RunID)
	}
	if res.Outcome == agent.OutcomeAwaitingApproval && !res.Pending {
		msg += fmt.Sprintf("\nan act awaits your answer: ioh-lsp approve %s [--for-run] | ioh-lsp reject %s --reason WHY, then ioh-lsp resume %s", res.RunID, res.RunID, res.RunID)
	}
	if res.Outcome == agent.OutcomeCancelled {
		msg += fmt.Sprintf("\ncontinue it from its last committed step: ioh-lsp resume %s", res.RunID)
	}
	if res.Outcome == agent.OutcomeInterrupted {
		msg += fmt.Sprintf("\nthe run stopped at its last committed step and nothing after it was recorded; fix the cause, then continue it: ioh-lsp resume %s", res.RunID)
	}
	if res.Outcome == agent.OutcomeBudgetExceeded {
		msg += "\n" + raiseHint(res)
	}
	fmt.Fprintln(s.stderr, msg)
	if s.stdout == nil {
		return
	}
	sum := map[string]any{
		"type": "summary", "run": res.RunID, "outcome": string(res.Outcome), "steps": res.Steps,
		"tokens": res.Usage.Total(), "cost_usd": res.CostUSD, "summary": res.Summary, "exit_code": code, "pending": res.Pending,
	}
	if res.Unpriced > 0 {
		sum["cost_usd"], sum["unpriced_calls"] = nil, res.Unpriced
	}
	if res.Err != nil {
		sum["error"] = res.Err.Error()
	}
	if res.Network != "" {
		sum["network"] = res.Network
	}
	if res.Report != nil {
		sum["verified"] = res.Report.Passed && res.Report.Proves
		sum["evidence"] = res.Report.Evidence()
		sum["checks"] = summaryChecks(res.Report)
		if res.Report.NeedsHuman() {
			sum["touches_checks"] = res.Report.TouchesChecks
		}
	}
	b, _ := json.Marshal(sum)
	s.stdout.Write(append(b, '\n'))
}

// summaryCheck is a check's final run in the summary: its verdict and
// the evidence behind it.
type summaryCheck struct {
	Name     string              `json:"name"`
	Passed   bool                `json:"passed"`
	Evidence string              `json:"evidence"`
	Tests    *verify.TestSummary `json:"tests,omitempty"`
	Fixed    []string            `json:"fixed,omitempty"`
	Problems []string            `json:"problems,omitempty"`
}

func summaryChecks(r *verify.Report) []summaryCheck {
	out := []summaryCheck{}
	for _, c := range r.Checks {
		if c.Phase == verify.PhaseGreen {
			out = append(out, summaryCheck{Name: c.Name, Passed: c.Passed, Evidence: c.Evidence, Tests: c.Tests, Fixed: c.Fixed, Problems: c.Problems})
		}
	}
	return out
}

// raiseHint tells how to continue a run its budget stopped, naming the
// flag of the limit it hit first.
func raiseHint(res *agent.Result) string {
	first := "--budget-steps N, --budget-tokens N, --budget-usd X or --budget-wall D"
	if f := agent.ResumeFlag(res.StopLimit()); f != "" {
		first = f
	}
	return fmt.Sprintf("continue it with a larger budget (nothing is charged twice): ioh-lsp resume %s %s", res.RunID, first)
}
