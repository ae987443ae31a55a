package lsp

import (
	"fmt"
	"path/filepath"
	"slices"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// publishEdits puts an Information at each edited range of an applied
// change: "run r-…, step 3: edit_file — why".
func (s *Server) publishEdits(run string, files []editedFile) {
	st, _ := s.runs.lookup(run)
	var entries []diagEntry
	for _, f := range files {
		if f.empty {
			continue
		}
		step, tool, why := lastTouch(st.events, f.rel)
		msg := fmt.Sprintf("run %s", run)
		if step > 0 {
			msg += fmt.Sprintf(", step %d: %s", step, tool)
		} else {
			msg += ": " + string(f.op)
		}
		if why != "" {
			msg += " — " + oneLine(why, 160)
		}
		for _, rng := range f.changed { // one per hunk
			entries = append(entries, diagEntry{f.path, newDiag(rng, protocol.DiagnosticSeverityInformation, msg, diagData{RunID: run, Kind: kindEdit}, "")})
		}
	}
	s.setDiags(run, kindEdit, entries)
}

// lastTouch finds the last tool call that wrote rel (the paths its
// result records it wrote: a patch's files, a sub-agent's merged edits),
// and the model's text of that step (its reason).
func lastTouch(events []event.Event, rel string) (step int, tool, why string) {
	for _, e := range events {
		if r, ok := e.Payload.(*event.ToolResult); ok && slices.Contains(r.Wrote, rel) {
			step, tool = e.Step, r.Tool
		}
	}
	if step == 0 {
		return 0, "", ""
	}
	for _, e := range events {
		if t, ok := e.Payload.(*event.ModelTurn); ok && e.Step == step {
			why = t.Text
		}
	}
	return step, tool, why
}

// publishHeld marks each file of a held proposal.
func (s *Server) publishHeld(folder string, p *agent.Proposal) {
	var entries []diagEntry
	for _, c := range p.Changes.Changes() {
		abs := filepath.Join(folder, filepath.FromSlash(c.Path))
		if c.From != "" {
			// A renamed file is marked where it is now.
			abs = filepath.Join(folder, filepath.FromSlash(c.From))
		}
		rng := lineRange(s.fileText(abs), 1)
		msg := fmt.Sprintf("run %s: verified change pending review (%s) — Apply, Show diff or Reject\nevidence: %s", p.Run, c.Op, evidenceText(p))
		sev := protocol.DiagnosticSeverityInformation
		if mark := selfTouchText(p); mark != "" {
			msg += "\nREVIEW CAREFULLY: " + mark
			sev = protocol.DiagnosticSeverityWarning
		}
		entries = append(entries, diagEntry{abs, newDiag(rng, sev, msg, diagData{RunID: p.Run, Kind: kindHeld}, "")})
	}
	s.setDiags(p.Run, kindHeld, entries)
}

// onPolicy puts a Warning `policy-denied` at a denied read or write (an
// exec or net denial on the task file). Where a grant can lift the
// deciding layer (policy.Grantable: a rule of the user, editor,
// workspace or task), the diagnostic's data names the act and target and
// code_action.go offers the "Allow once" quick fix. A denial no grant
// lifts (a protected path, verify.protect, a path outside the workspace,
// the network's default) gets no quick fix, which would always fail: its
// data leaves the act out and its message says why.
func (s *Server) onPolicy(run string, step int, p *event.Policy) {
	if p.Effect != "deny" {
		return
	}
	act, target := p.Act, p.Target
	st, _ := s.runs.lookup(run)
	var abs string
	switch {
	case (act == "read" || act == "write") && target != "" && st.folder != "":
		abs = filepath.Join(st.folder, filepath.FromSlash(target))
		if filepath.IsAbs(target) {
			abs = target
		}
	case st.contract != nil && st.contract.Path != "" && filepath.IsAbs(st.contract.Path):
		abs = st.contract.Path // exec and net denials show on the task file
	default:
		return
	}
	msg := fmt.Sprintf("run %s, step %d: policy denied %s %q", run, step, act, target)
	if p.Layer != "" {
		msg += " (layer " + p.Layer + ")"
	}
	data := diagData{RunID: run, Kind: kindPolicy, Act: act, Target: target}
	if layer := policy.Layer(p.Layer); !policy.Grantable(layer) {
		data.Act, data.Target = "", ""
		if layer == policy.LayerBuiltin {
			msg += ": the path is protected (docs/policy.md#protected-paths) and cannot be allowed from the editor"
		} else {
			msg += ": " + p.Reason + "; this cannot be allowed from the editor"
		}
	}
	rng := lineRange(s.fileText(abs), 1)
	s.addDiag(run, kindPolicy, diagEntry{abs, newDiag(rng, protocol.DiagnosticSeverityWarning, msg, data, codePolicyDeny)})
}
