package approve

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
)

// NoTerminal is `--approve ask` with a stdin that is not a terminal (a
// pipe, a closed stdin, /dev/null): nobody could answer a prompt, so none
// is printed. What needs an answer is deferred (the run ends
// awaiting_approval, `run` exits 4) and Out is told once how to answer it
// later.
type NoTerminal struct {
	Out  io.Writer
	once sync.Once
}

var _ agent.Approver = (*NoTerminal)(nil)

// ApproveAct defers the act: approve or reject answers it, resume goes on.
func (n *NoTerminal) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	n.say(fmt.Sprintf("%s %s is left for an answer: ioh-lsp approve --last (or reject --last), then ioh-lsp resume --last", req.Verdict.Act, req.Verdict.Target))
	return agent.Decision{Answer: agent.Defer}, nil
}

// ApproveChange defers the change: approve applies it, reject drops it.
func (n *NoTerminal) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	n.say("the change is left pending: see it with ioh-lsp diff --last, apply it with ioh-lsp approve --last (or drop it with reject --last)")
	return agent.Decision{Answer: agent.Defer}, nil
}

// say prints the note the first time only (sub-agents ask too).
func (n *NoTerminal) say(what string) {
	n.once.Do(func() {
		fmt.Fprintf(n.Out, "--approve ask: stdin is not a terminal, so nothing is asked; %s\n", what)
	})
}
