package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/lsp/api"
)

// askArgs is ioh.ask's argument (declared in lsp/api).
type askArgs = api.AskArgs

// commandAsk: {goal, uri?, range?} → {runId}. The contract is built from
// the goal, with the file (and selection) as context and the project's own
// test command as the check.
func (s *Server) commandAsk(ctx context.Context, a askArgs) (api.RunRef, error) {
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

// askContract builds and validates the contract of an ask.
func (s *Server) askContract(a askArgs) (*contract.Contract, string, error) {
	goal := a.Goal
	var folder, rel string
	if a.URI != "" {
		abs, err := pathOf(uri.URI(a.URI))
		if err != nil {
			return nil, "", err
		}
		if folder, err = s.folderFor(abs); err != nil {
			return nil, "", err
		}
		var ok bool
		if rel, ok = relTo(folder, abs); !ok {
			return nil, "", fmt.Errorf("%s is outside the workspace folders", abs)
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
	} else {
		fs := s.folderPaths()
		if len(fs) == 0 {
			return nil, "", fmt.Errorf("no workspace folder is open")
		}
		folder = fs[0]
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
