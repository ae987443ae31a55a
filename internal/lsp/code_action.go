package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// kindAgent is the code action kind of agent tasks that are not fixes.
const kindAgent protocol.CodeActionKind = "refactor.ioh"

// actionData rides in CodeAction.Data between listing and resolve: the
// command to run and its argument.
type actionData struct {
	Command string          `json:"command"`
	Arg     json.RawMessage `json:"arg"`
}

// CodeAction lists the agent's actions at a range (docs/lsp.md#code-actions): "Fix with
// agent" per diagnostic in the context, "Allow once" on a policy denial,
// "Ask agent about selection", "Run task" on a task file, and "Apply" /
// "Reject" / "Show diff" on a file with a pending proposal. Listing only
// names the actions; codeAction/resolve attaches the command when the
// client supports it.
func (s *Server) CodeAction(ctx context.Context, p *protocol.CodeActionParams) ([]protocol.CommandOrCodeAction, error) {
	abs, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, invalidParams("codeAction: %v", err)
	}
	s.mu.Lock()
	lazy := s.caps.codeActionResolve && s.caps.codeActionData
	s.mu.Unlock()
	var out []protocol.CommandOrCodeAction
	add := func(title string, kind protocol.CodeActionKind, diags []protocol.Diagnostic, preferred bool, cmd string, arg any) {
		raw, _ := json.Marshal(arg)
		ca := &protocol.CodeAction{Title: title, Kind: &kind, Diagnostics: diags}
		if preferred {
			ca.IsPreferred = ptr(true)
		}
		data, _ := json.Marshal(actionData{Command: cmd, Arg: raw})
		ca.Data = data
		if !lazy {
			ca.Command = command(title, cmd, raw)
		}
		out = append(out, ca)
	}
	rel := filepath.Base(abs)
	if folder, err := s.folderFor(abs); err == nil {
		if r, ok := relTo(folder, abs); ok {
			rel = r
		}
	}
	for _, d := range p.Context.Diagnostics {
		if dd, ok := diagDataOf(d); ok {
			if dd.Kind == kindPolicy && dd.Act != "" {
				add(fmt.Sprintf("Allow once: %s %s", dd.Act, dd.Target), protocol.CodeActionKindQuickFix, []protocol.Diagnostic{d}, true,
					cmdAllowOnce, api.AllowOnceArgs{RunID: dd.RunID, Act: dd.Act, Target: dd.Target})
				continue
			}
			if dd.Kind == kindBudget {
				add(continueTitle, protocol.CodeActionKindQuickFix, []protocol.Diagnostic{d}, true, cmdResume, api.RunRef{RunID: dd.RunID})
				continue
			}
			if dd.Kind != kindCheck {
				continue // edit marks and held notices are not problems to fix
			}
		}
		msg := diagText(d)
		src, _ := d.Source.Get()
		goal := fmt.Sprintf("Fix this diagnostic in %s at line %d: %s", rel, d.Range.Start.Line+1, msg)
		if src != "" {
			goal = fmt.Sprintf("Fix this %s diagnostic in %s at line %d: %s", src, rel, d.Range.Start.Line+1, msg)
		}
		add("Fix with agent: "+oneLine(msg, 60), protocol.CodeActionKindQuickFix, []protocol.Diagnostic{d}, false,
			cmdAsk, askArgs{Goal: goal, URI: string(p.TextDocument.URI), Range: &d.Range})
	}
	if p.Range.Start != p.Range.End {
		rng := p.Range
		add("Ask agent about selection", kindAgent, nil, false, cmdAsk,
			askArgs{Goal: "Improve the selected code", URI: string(p.TextDocument.URI), Range: &rng})
	}
	if folder, err := s.folderFor(abs); err == nil && isTaskFile(folder, abs) {
		add("Run task", kindAgent, nil, false, cmdRun, api.RunArgs{Contract: string(p.TextDocument.URI)})
	}
	for _, st := range s.pendingAt(abs) {
		ref := api.RunRef{RunID: st.id}
		add(fmt.Sprintf("Apply (ioh run %s)", st.id), kindAgent, nil, false, cmdApprove, ref)
		add(fmt.Sprintf("Show diff (ioh run %s)", st.id), kindAgent, nil, false, cmdShowDiff, ref)
		add(fmt.Sprintf("Reject (ioh run %s)", st.id), kindAgent, nil, false, cmdReject, ref)
	}
	return out, nil
}

// CodeActionResolve attaches the command named in the action's data.
func (s *Server) CodeActionResolve(ctx context.Context, ca *protocol.CodeAction) (*protocol.CodeAction, error) {
	var d actionData
	if len(ca.Data) == 0 || json.Unmarshal(ca.Data, &d) != nil || d.Command == "" {
		return nil, invalidParams("codeAction/resolve: the action carries no ioh data")
	}
	if _, ok := commandTable[d.Command]; !ok {
		return nil, invalidParams("codeAction/resolve: unknown command %q", d.Command)
	}
	ca.Command = command(ca.Title, d.Command, d.Arg)
	return ca, nil
}

func command(title, cmd string, arg json.RawMessage) protocol.Command {
	return protocol.Command{Title: title, Command: cmd, Arguments: []protocol.LSPAny{protocol.LSPAny(arg)}}
}

// diagText is a diagnostic's message as plain text.
func diagText(d protocol.Diagnostic) string {
	switch m := d.Message.(type) {
	case protocol.String:
		return string(m)
	case *protocol.MarkupContent:
		return m.Value
	}
	return ""
}

// isTaskFile: *.ioh.yaml (or .yml) anywhere, or any file under .ioh/tasks/.
func isTaskFile(folder, abs string) bool {
	base := filepath.Base(abs)
	if matched, _ := filepath.Match("*.ioh.yaml", base); matched {
		return true
	}
	if matched, _ := filepath.Match("*.ioh.yml", base); matched {
		return true
	}
	rel, ok := relTo(folder, abs)
	return ok && len(rel) > len(".ioh/tasks/") && rel[:len(".ioh/tasks/")] == ".ioh/tasks/"
}

// pendingAt lists the runs with a pending proposal touching abs.
func (s *Server) pendingAt(abs string) []runState {
	var out []runState
	for _, st := range s.runs.pending() {
		if st.proposal == nil || st.proposal.Changes == nil {
			continue
		}
		for _, c := range st.proposal.Changes.Changes() {
			if filepath.Join(st.folder, filepath.FromSlash(c.Path)) == abs ||
				(c.From != "" && filepath.Join(st.folder, filepath.FromSlash(c.From)) == abs) {
				out = append(out, st)
				break
			}
		}
	}
	return out
}
