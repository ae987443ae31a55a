package agent

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/ioh-lsp/ioh-lsp/agent/model"
)

// stallSteps: the same calls this many steps running, with the change set
// unchanged, is a stall.
const stallSteps = 3

const replanText = "You have repeated the same tool call several times without changing anything. Stop and replan: say what you have learned, what is blocking you, and try a different approach (or call finish if the task is done)."

// checkStall updates stall detection after a turn. The first stall appends
// a replan prompt to the turn's results; a second one reports true.
func (a *agentRun) checkStall(calls []model.ToolCall, user *model.Message) bool {
	h := sha256.New()
	for _, c := range calls {
		h.Write([]byte(c.Name))
		h.Write([]byte{0})
		h.Write(c.Arguments)
		h.Write([]byte{0})
	}
	sig := hex.EncodeToString(h.Sum(nil))
	fp := a.cs.Fingerprint()
	if sig == a.st.StallSig && fp == a.st.StallFP {
		a.st.StallCount++
	} else {
		a.st.StallSig, a.st.StallFP, a.st.StallCount = sig, fp, 1
	}
	if a.st.StallCount < stallSteps {
		return false
	}
	if a.st.Replanned {
		return true
	}
	a.st.Replanned = true
	a.st.StallCount = 0
	if user.Text != "" {
		user.Text += "\n\n"
	}
	user.Text += replanText
	return false
}
