package approve

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/review"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Auto approves without asking, as `--approve auto` (honoured only from the
// user config or the command line). It applies a verified change and
// leaves any other pending. Ask-tier acts are denied unless AllowActs is
// set, so "auto" never silently widens the policy.
type Auto struct {
	AllowActs bool
}

var _ agent.Approver = Auto{}

// ApproveAct allows once when AllowActs, else denies with a reason.
func (a Auto) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	if a.AllowActs {
		return agent.Decision{Answer: agent.AllowOnce}, nil
	}
	return agent.Decision{Answer: agent.Deny, By: "--approve auto", Reason: fmt.Sprintf(
		"%s %s needs approval and automatic approval does not grant acts; add an allow rule to the policy to permit it",
		req.Verdict.Act, req.Verdict.Target)}, nil
}

// ApproveChange applies a verified change that leaves its own checks
// alone. An unverified change, one that touches its own checks (test
// files, what a check runs or how, package-init code: see
// verify.TouchedChecks), one that writes a file that runs on the user's
// machine later (hooks, CI, build scripts, editor tasks: review.Check)
// and one whose code now reads its environment are deferred: the change
// stays pending for a human (`ioh-lsp approve`), the run ends
// awaiting_approval and `run` exits 4.
func (Auto) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	if !p.Verified {
		return agent.Decision{Answer: agent.Defer, Reason: "not verified: automatic approval applies only verified changes"}, nil
	}
	if p.Report.NeedsHuman() {
		return agent.Decision{Answer: agent.Defer, Reason: "the change touches its own checks, so it waits for a human: " +
			strings.Join(p.Report.TouchesChecks, "; ")}, nil
	}
	if hold := held(p.Changes); len(hold) > 0 {
		return agent.Decision{Answer: agent.Defer, Reason: "the change writes files that run on your machine later or reads its environment, so it waits for a human: " +
			strings.Join(hold, "; ")}, nil
	}
	return agent.Decision{Answer: agent.AllowOnce}, nil
}

// held is why a person must look at the change set whatever the
// verification said (review.Check's Hold).
func held(cs *workspace.ChangeSet) []string {
	if cs == nil {
		return nil
	}
	return review.Check(cs.Root().Dir(), cs.Changes(), func(rel string) []byte {
		b, _ := cs.Base(rel)
		return b
	}).Hold
}

// Never approves nothing, as `--approve never`: the change is left pending
// (Defer) and Ask-tier acts are denied with a reason, so a run can go on
// without them.
type Never struct{}

var _ agent.Approver = Never{}

// ApproveAct denies.
func (Never) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Deny, By: "--approve never", Reason: fmt.Sprintf(
		"%s %s needs approval and no approver is available (--approve never); add an allow rule to the policy to permit it",
		req.Verdict.Act, req.Verdict.Target)}, nil
}

// ApproveChange defers: the change stays pending.
func (Never) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Defer}, nil
}

// Deferral defers everything: the run stops as awaiting_approval at the
// first Ask-tier act, and `resume` continues it with the answer.
type Deferral struct{}

var _ agent.Approver = Deferral{}

// ApproveAct defers.
func (Deferral) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Defer}, nil
}

// ApproveChange defers.
func (Deferral) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	return agent.Decision{Answer: agent.Defer}, nil
}

// ForMode returns the approver for an --approve mode: ask (a Terminal on
// in and out; NoTerminal when in is a file that is not a terminal, as a
// pipe, a closed stdin or /dev/null), auto, or never.
func ForMode(mode string, in io.Reader, out io.Writer) (agent.Approver, error) {
	switch mode {
	case "ask", "":
		if _, file := in.(*os.File); file && TerminalsKnown && !IsTerminal(in) {
			return &NoTerminal{Out: out}, nil
		}
		return &Terminal{In: in, Out: out}, nil
	case "auto":
		return Auto{}, nil
	case "never":
		return Never{}, nil
	}
	return nil, fmt.Errorf("unknown approve mode %q: want ask, auto or never", mode)
}
