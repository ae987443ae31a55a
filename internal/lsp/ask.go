package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// askArgs is ioh.ask's argument (declared in lsp/api).
type askArgs = api.AskArgs

// commandAsk: {goal, uri?, range?, runId?} → {runId}. The contract is
// built from the goal, with the file (and selection) as context and the
// project's own test command as the check. With runId the goal is a
// follow-up in that run's conversation (followUp).
func (s *Server) commandAsk(ctx context.Context, a askArgs) (api.RunRef, error) {
	if a.RunID != "" {
		return s.followUp(ctx, a)
	}
	c, folder, err := s.askContract(a)
	if err != nil {
		return api.RunRef{}, invalidParams("%s: %v", cmdAsk, err)
	}
	id, err := s.startRun(ctx, folder, c)
	if err != nil {
		return api.RunRef{}, err
	}
	return api.RunRef{RunID: id}, nil
}

// followUp sends an ask's goal (with the file and selection it names) to
// run a.RunID as the user's next turn (agent.Harness.Continue): the run
// itself while it can go on (its change pending: a held proposal or a
// review in progress is withdrawn and the run continues), else a new run
// linked to it. The answer names the run the turn went to.
func (s *Server) followUp(ctx context.Context, a askArgs) (api.RunRef, error) {
	goal, folder, _, err := s.askGoal(a)
	if err != nil {
		return api.RunRef{}, invalidParams("%s: %v", cmdAsk, err)
	}
	var c *contract.Contract
	var ended <-chan struct{}
	if st, ok := s.runs.lookup(a.RunID); ok {
		if st.folder != "" {
			folder = st.folder
		}
		if st.contract != nil {
			cc := *st.contract
			cc.Goal = goal
			c = &cc
		}
		select {
		case <-st.done:
		default:
			ended = st.done // tracked here and not ended yet
		}
	}
	eng, err := s.engine(ctx, folder)
	if err != nil {
		return api.RunRef{}, err
	}
	// A proposal held or in review here ends first (withdrawn, its
	// change pending), and its end is reported before the turn starts.
	withdrawn, err := eng.Harness.Withdraw(ctx, a.RunID)
	if err != nil {
		return api.RunRef{}, err
	}
	if withdrawn && ended != nil {
		select {
		case <-ended:
		case <-ctx.Done():
			return api.RunRef{}, ctx.Err()
		}
	}
	runCtx, cancel := context.WithCancel(s.ctx)
	run, err := eng.Harness.Continue(runCtx, a.RunID, goal)
	if err != nil {
		cancel()
		if errors.Is(err, agent.ErrConfig) || errors.Is(err, agent.ErrNotFound) {
			return api.RunRef{}, invalidParams("%s: %v", cmdAsk, err)
		}
		return api.RunRef{}, fmt.Errorf("%s: %w", cmdAsk, err)
	}
	if c == nil {
		s.runs.with(run.ID(), func(st *runState) { st.goal = goal })
	}
	s.track(run, folder, eng, c, cancel)
	return api.RunRef{RunID: run.ID()}, nil
}

// askContract builds and validates the contract of an ask.
func (s *Server) askContract(a askArgs) (*contract.Contract, string, error) {
	goal, folder, rel, err := s.askGoal(a)
	if err != nil {
		return nil, "", err
	}
	doc := map[string]any{"version": 1, "goal": goal}
	if rel != "" {
		doc["context"] = []string{rel}
	}
	if checks := contract.ProjectChecks(folder); len(checks) > 0 {
		doc["verify"] = map[string]any{"checks": checks}
	}
	// No model: the run takes the configuration's (config.ApplyToContract),
	// where the editor settings are a layer judged by the workspace's
	// trust. Copied into this inline contract, which is trusted, the
	// settings' endpoint would pass that judgement by (a repository's
	// .vscode/settings.json choosing where the code goes).
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, "", err
	}
	c, err := contract.Parse(raw, "ask")
	if err != nil {
		return nil, "", err
	}
	return c, folder, nil
}

// askGoal is an ask's goal with the file (workspace-relative: rel) and
// the selection it names, and the workspace folder it belongs to.
func (s *Server) askGoal(a askArgs) (goal, folder, rel string, err error) {
	goal = a.Goal
	if a.URI == "" {
		fs := s.folderPaths()
		if len(fs) == 0 {
			return "", "", "", fmt.Errorf("no workspace folder is open")
		}
		return goal, fs[0], "", nil
	}
	abs, err := pathOf(uri.URI(a.URI))
	if err != nil {
		return "", "", "", err
	}
	if folder, err = s.folderFor(abs); err != nil {
		return "", "", "", err
	}
	var ok bool
	if rel, ok = relTo(folder, abs); !ok {
		return "", "", "", fmt.Errorf("%s is outside the workspace folders", abs)
	}
	goal += "\n\nFile: " + rel
	if a.Range != nil {
		text := s.fileText(abs)
		starts := lineStarts(text)
		from, to := offsetOf(text, starts, a.Range.Start), offsetOf(text, starts, a.Range.End)
		goal += fmt.Sprintf(" (lines %d-%d)", a.Range.Start.Line+1, a.Range.End.Line+1)
		if to > from {
			goal += "\nSelection:\n" + string(text[from:to])
		}
	}
	return goal, folder, rel, nil
}
