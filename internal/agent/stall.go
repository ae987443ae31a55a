package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// Stalls are judged by what a turn meant, not by its bytes: the same
// calls again, failed edits of one file that change nothing, the same
// error again, and long runs of reading without an edit. The first of
// the repeat kinds appends a replan prompt; the next stops the run.
const (
	// stallSteps: the same calls this many steps running, with the
	// change set unchanged.
	stallSteps = 3
	// stallEdits: failed edits or patches of one file, the change set
	// unchanged, before the replan prompt; stallEditsStop before the stop.
	stallEdits     = 3
	stallEditsStop = 6
	// stallErrors: turns running that got the same error text.
	stallErrors     = 3
	stallErrorsStop = 6
	// readOnlyNudge: read-only steps running without an edit before a
	// prompt to act (again every readOnlyNudge steps; never a stop).
	readOnlyNudge = 15
)

const replanText = "You have repeated the same tool call several times without changing anything. Stop and replan: say what you have learned, what is blocking you, and try a different approach (or call finish if the task is done)."

// turnFacts is what stall detection reads from one turn.
type turnFacts struct {
	sig         string   // the calls, byte for byte
	failedEdits []string // paths of the edit/patch/write calls that failed
	edited      bool     // an edit call succeeded
	errSig      string   // the text of the turn's first failed result
	readOnly    bool     // every call was read-only
}

// facts reads a turn's calls and their results.
func (a *agentRun) facts(calls []model.ToolCall, results []model.ToolResult) turnFacts {
	h := sha256.New()
	byID := map[string]model.ToolResult{}
	for _, r := range results {
		byID[r.CallID] = r
	}
	f := turnFacts{readOnly: len(calls) > 0}
	for _, c := range calls {
		h.Write([]byte(c.Name))
		h.Write([]byte{0})
		h.Write(c.Arguments)
		h.Write([]byte{0})
		t, ok := a.tools[c.Name]
		r := byID[c.ID]
		if r.IsError && f.errSig == "" {
			f.errSig = hashText(strings.TrimSpace(r.Content))
		}
		if !ok || c.Name == tools.FinishName {
			f.readOnly = false
			continue
		}
		if t.ReadOnly() {
			continue
		}
		f.readOnly = false
		if c.Name == tools.SpawnName {
			continue
		}
		if !r.IsError {
			f.edited = true
			continue
		}
		f.failedEdits = append(f.failedEdits, writeTargets(t, c)...)
	}
	f.sig = hex.EncodeToString(h.Sum(nil))
	return f
}

// writeTargets are the paths a call would write (its write acts).
func writeTargets(t tools.Tool, c model.ToolCall) []string {
	acts, err := t.Acts(c.Arguments)
	if err != nil {
		return []string{"(unparsed " + c.Name + ")"}
	}
	var out []string
	for _, act := range acts {
		if act.Act == policy.ActWrite {
			out = append(out, act.Target)
		}
	}
	return out
}

func hashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// checkStall updates stall detection after a turn. A first stall appends
// a replan prompt to the turn's results; a later one returns why the run
// stops ("" to go on).
func (a *agentRun) checkStall(calls []model.ToolCall, user *model.Message) string {
	f := a.facts(calls, user.ToolResults)
	fp := a.cs.Fingerprint()
	st := a.st
	unchanged := fp == st.StallFP
	if f.sig == st.StallSig && unchanged {
		st.StallCount++
	} else {
		st.StallSig, st.StallCount = f.sig, 1
	}
	a.countEdits(f, unchanged)
	if f.errSig != "" && f.errSig == st.ErrSig {
		st.ErrCount++
	} else {
		st.ErrSig, st.ErrCount = f.errSig, min(len(f.errSig), 1)
	}
	if f.readOnly {
		st.ReadOnlySteps++
	} else {
		st.ReadOnlySteps = 0
	}
	st.StallFP = fp

	var why, prompt string
	switch {
	case st.StallCount >= stallSteps:
		why, prompt = "the agent repeated the same call without changing anything, after a replan prompt", replanText
		st.StallCount = 0
	case st.EditFails >= stallEditsStop || (st.EditFails >= stallEdits && !st.Replanned):
		why = fmt.Sprintf("%d edits of %s failed in a row without changing anything, after a replan prompt", st.EditFails, st.EditFile)
		prompt = fmt.Sprintf("Your last %d edits of %s failed and changed nothing. Stop and replan: read_file the exact lines you want to change (copy the old text from it, without line numbers), or write the file whole, or try another approach.", st.EditFails, st.EditFile)
	case st.ErrCount >= stallErrorsStop || (st.ErrCount >= stallErrors && !st.Replanned):
		why = fmt.Sprintf("the same error came back %d times in a row, after a replan prompt", st.ErrCount)
		prompt = fmt.Sprintf("The same error has come back %d times in a row. Stop and replan: say what the error means and change what you do (other arguments, another tool, another approach).", st.ErrCount)
	}
	if prompt != "" {
		if st.Replanned {
			return why
		}
		st.Replanned = true
		appendText(user, prompt)
		return ""
	}
	if f.readOnly && st.ReadOnlySteps%readOnlyNudge == 0 && !a.exploring() {
		appendText(user, fmt.Sprintf("You have made %d read-only steps in a row without an edit. If you know enough, make the change now; if not, say what you are still missing and look for exactly that.", st.ReadOnlySteps))
	}
	return ""
}

// countEdits counts failed edits of one file while the change set stays
// as it was; a successful edit, a change or another file starts anew.
func (a *agentRun) countEdits(f turnFacts, unchanged bool) {
	st := a.st
	switch {
	case f.edited || !unchanged:
		st.EditFile, st.EditFails = "", 0
		if len(f.failedEdits) > 0 && !f.edited {
			st.EditFile, st.EditFails = f.failedEdits[0], 1
		}
	case len(f.failedEdits) == 0:
		// a read between two attempts keeps the count
	case f.failedEdits[0] == st.EditFile:
		st.EditFails++
	default:
		st.EditFile, st.EditFails = f.failedEdits[0], 1
	}
}

func appendText(m *model.Message, s string) {
	if m.Text != "" {
		m.Text += "\n\n"
	}
	m.Text += s
}
