package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/render"
)

// runSummary is one entry of `runs --json` (docs/cli.md#runs).
type runSummary struct {
	ID      string `json:"id"`
	Goal    string `json:"goal"`
	Outcome string `json:"outcome"`
	Steps   int    `json:"steps"`
	// Tokens is what the token budget counts; CacheReadTokens, not
	// counted, beside it (docs/budgets.md).
	Tokens          int64 `json:"tokens"`
	CacheReadTokens int64 `json:"cache_read_tokens"`
	// CostUSD is null when a call of the run (or of a sub-agent) could
	// not be priced: its cost is unknown, not $0.
	CostUSD *float64 `json:"cost_usd"`
	// UnpricedCalls counts those calls.
	UnpricedCalls int `json:"unpriced_calls,omitempty"`
	// Limits is the run's budget (as raised by a resume); an absent
	// field is unlimited.
	Limits  runLimits `json:"limits"`
	Started string    `json:"started"`
	Parent  *string   `json:"parent"`
	// StateError says why the run's stored state does not decode and
	// what to do (agent.StoredRun.StateErr); absent when it decodes.
	StateError string `json:"state_error,omitempty"`

	spend     agent.Spend
	reviewing bool // an editor shows its change now (agent.StoredRun.Reviewing)
	change    bool // what awaits approval is its change, not an act
}

// runLimits is a run's budget in `runs --json`.
type runLimits struct {
	Steps   int     `json:"steps,omitempty"`
	Tokens  int64   `json:"tokens,omitempty"`
	CostUSD float64 `json:"cost_usd,omitempty"`
	Wall    string  `json:"wall,omitempty"`
}

// warnRecovered prints, loudly, that the store replaced a corrupt
// database, and where the old file is (rec, agent.History.Recovered; ""
// when it did not).
func warnRecovered(w io.Writer, rec string) {
	if rec != "" {
		fmt.Fprintf(w, "ioh-lsp: WARNING: %s\n", rec)
	}
}

// cmdRuns lists the runs of the workspace; tokens and cost include each
// run's sub-agents.
func cmdRuns(ctx context.Context, env *cliEnv, args []string) int {
	env, g := guardOutput(env)
	fs := newFlagSet("runs", env.stderr)
	asJSON := fs.Bool("json", false, "print a JSON array")
	pos, err := parseFlags(fs, args)
	g.printsJSON(*asJSON)
	if err == nil {
		err = wantArgs(pos, 0, 0)
	}
	if err != nil {
		return usageError(env, "runs", err)
	}
	hs, _, err := workspaceHistory(ctx, env)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp runs: %v\n", err)
		return errorExit(err, exitFailed)
	}
	defer hs.Close()
	rows, err := hs.Runs(ctx)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp runs: %v\n", err)
		return errorExit(err, exitFailed)
	}
	list := summarize(rows)
	if *asJSON {
		b, _ := json.MarshalIndent(list, "", "  ")
		fmt.Fprintln(env.stdout, string(b))
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOUTCOME\tSTEPS\tTOKENS\tCACHED\tCOST\tWALL\tSTARTED\tGOAL")
	for _, r := range list {
		id := r.ID
		if r.Parent != nil {
			id = "  " + id
		}
		steps, tokens, cost, wall := spendColumns(r.spend)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", id, r.Outcome, steps, tokens, r.CacheReadTokens, cost, wall, r.Started, oneLine(r.Goal, 60))
	}
	tw.Flush()
	for _, r := range list {
		if r.StateError != "" {
			fmt.Fprintf(env.stderr, "ioh-lsp runs: WARNING: %s\n", r.StateError)
		}
	}
	for _, r := range list {
		if r.Parent == nil {
			if hint := runHint(r); hint != "" {
				fmt.Fprintln(env.stdout, hint)
			}
		}
	}
	return exitOK
}

// runHint says how to go on with a root run that waits for someone: an
// interrupted run resumes, a change under review in an editor is answered
// there, a pending change is approved or rejected.
func runHint(r runSummary) string {
	switch {
	case r.Outcome == string(agent.OutcomeInterrupted):
		return fmt.Sprintf("%s was interrupted; continue it from its last committed step: ioh-lsp resume %s", r.ID, r.ID)
	case r.Outcome == string(agent.OutcomeAwaitingApproval) && r.reviewing:
		return fmt.Sprintf("%s is awaiting review in the editor: answer it there (if the editor closes first, it stays pending for ioh-lsp approve %s)", r.ID, r.ID)
	case r.Outcome == string(agent.OutcomeAwaitingApproval) && r.change:
		return fmt.Sprintf("%s is awaiting review: ioh-lsp diff %s, then ioh-lsp approve %s or ioh-lsp reject %s", r.ID, r.ID, r.ID, r.ID)
	case r.Outcome == string(agent.OutcomeAwaitingApproval):
		return fmt.Sprintf("%s waits for an answer about an act: ioh-lsp approve %s or ioh-lsp reject %s, then ioh-lsp resume %s", r.ID, r.ID, r.ID, r.ID)
	}
	return ""
}

// summarize turns runs into summaries, each with its sub-agents' spend
// rolled up (agent.StoredRun.Spend) and its outcome as shown when read
// (a run nothing drives shows as interrupted).
func summarize(runs []*agent.StoredRun) []runSummary {
	out := make([]runSummary, 0, len(runs))
	for _, r := range runs {
		sp := r.Spend
		s := runSummary{ID: r.RunID, Goal: r.Goal, Outcome: string(r.Shown), Steps: sp.Steps, Tokens: sp.Tokens, CacheReadTokens: sp.CacheReadTokens,
			UnpricedCalls: sp.Unpriced, Started: r.Started.UTC().Format(time.RFC3339), spend: sp, reviewing: r.Reviewing, change: r.Offered,
			Limits: runLimits{Steps: sp.Limits.Steps, Tokens: sp.Limits.Tokens, CostUSD: sp.Limits.CostUSD}}
		if sp.CostKnown() {
			c := sp.CostUSD
			s.CostUSD = &c
		}
		if sp.Limits.Wall > 0 {
			s.Limits.Wall = sp.Limits.Wall.String()
		}
		if r.Parent != "" {
			p := r.Parent
			s.Parent = &p
		}
		if r.StateErr != nil {
			s.StateError = r.StateErr.Error()
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started < out[j].Started })
	return out
}

// spendColumns renders a run's spend against each of its limits for the
// runs table: "3/40", "12045/400000", "$0.0100/$2.00" ("unknown" when a
// call could not be priced), "1m2s/15m0s"; "-" for a wall without limit.
func spendColumns(s agent.Spend) (steps, tokens, cost, wall string) {
	steps, tokens, cost, wall = fmt.Sprint(s.Steps), fmt.Sprint(s.Tokens), s.CostText(), "-"
	if s.Limits.Steps > 0 {
		steps += fmt.Sprintf("/%d", s.Limits.Steps)
	}
	if s.Limits.Tokens > 0 {
		tokens += fmt.Sprintf("/%d", s.Limits.Tokens)
	}
	if s.Limits.CostUSD > 0 {
		cost += fmt.Sprintf("/$%.2f", s.Limits.CostUSD)
	}
	if s.Limits.Wall > 0 {
		wall = fmt.Sprintf("%s/%s", s.Elapsed.Round(time.Second), s.Limits.Wall)
	}
	return steps, tokens, cost, wall
}

// cmdTrace prints a run's trace, its sub-agents' events included.
func cmdTrace(ctx context.Context, env *cliEnv, args []string) int {
	env, g := guardOutput(env)
	fs := newFlagSet("trace RUN_ID", env.stderr)
	asJSON := fs.Bool("json", false, "print JSON Lines")
	arg, err := parseRunID(fs, args)
	g.printsJSON(*asJSON)
	if err != nil {
		return usageError(env, "trace", err)
	}
	hs, root, err := workspaceHistory(ctx, env)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp trace: %v\n", err)
		return errorExit(err, exitFailed)
	}
	defer hs.Close()
	runs, err := hs.Runs(ctx)
	var id string
	if err == nil {
		id, err = pickRun(runs, arg, root)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp trace: %v\n", err)
		return runErrorExit(err)
	}
	if _, err := hs.Run(ctx, id); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp trace: %v\n", err)
		return errorExit(err, exitFailed)
	}
	evs, err := hs.TreeEvents(ctx, id)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp trace: %v\n", err)
		return errorExit(err, exitFailed)
	}
	for _, e := range evs {
		if *asJSON {
			b, err := json.Marshal(e)
			if err != nil {
				continue
			}
			fmt.Fprintln(env.stdout, string(b))
			continue
		}
		fmt.Fprintln(env.stdout, render.Line(e))
	}
	return exitOK
}

// oneLine is s on one line, cut to at most n bytes on a character
// boundary.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n] + "…"
	}
	return s
}
