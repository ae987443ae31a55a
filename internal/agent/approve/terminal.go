// Package approve holds the approvers that are not the editor: a terminal
// prompt for `ioh-lsp run --approve ask`, automatic approval for `auto`,
// and deferral for `never`. Each implements agent.Approver.
package approve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// maxTries bounds re-prompts after answers that are not one of the choices.
const maxTries = 5

// Terminal asks on a terminal: In is read a byte at a time (so nothing
// past the answer is consumed), Out receives the prompts. Prompts from
// concurrent callers (sub-agents) are serialised. End of input defers: the
// run stops as awaiting_approval and `resume` asks again. A prompt ends
// as soon as ctx does (Ctrl-C, SIGTERM): the read of In it waits on is
// left pending, and the byte it returns is the first of the next answer.
type Terminal struct {
	In  io.Reader
	Out io.Writer

	mu sync.Mutex
	// The reader goroutine: each value sent on want makes it read one
	// byte of In and send it on got; pending is true between the two.
	start   sync.Once
	want    chan struct{}
	got     chan readResult
	pending bool
}

// readResult is one read of In.
type readResult struct {
	b   byte
	n   int
	err error
}

var _ agent.Approver = (*Terminal)(nil)

// ApproveAct asks about one Ask-tier act: allow [o]nce, allow for this
// [r]un, or [d]eny with a reason the model sees.
func (t *Terminal) ApproveAct(ctx context.Context, req *agent.ActRequest) (agent.Decision, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := req.Verdict
	fmt.Fprintf(t.Out, "\nrun %s, step %d: %s wants to %s %s\n", req.Run, req.Step, req.Tool, v.Act, v.Target)
	if v.Reason != "" {
		fmt.Fprintf(t.Out, "  policy: %s\n", v.Reason)
	}
	ans, err := t.choose(ctx, "Allow [o]nce, allow for this [r]un, or [d]eny? ", "ord")
	if err != nil || ans == 0 {
		return agent.Decision{Answer: agent.Defer}, err
	}
	switch ans {
	case 'o':
		return agent.Decision{Answer: agent.AllowOnce}, nil
	case 'r':
		return agent.Decision{Answer: agent.AllowRun}, nil
	}
	// The model reads "denied by the user: ACT TARGET: REASON"; no reason
	// given reads as such.
	reason, err := t.readLine(ctx, "Reason (shown to the agent): ")
	if err != nil {
		return agent.Decision{Answer: agent.Deny}, ignoreEOF(err)
	}
	return agent.Decision{Answer: agent.Deny, Reason: reason}, nil
}

// ApproveChange shows the whole diff and the verification report, then
// asks to [a]pply, [r]eject (with a reason) or [d]efer.
func (t *Terminal) ApproveChange(ctx context.Context, p *agent.Proposal) (agent.Decision, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.Out, "\nrun %s: %s\n", p.Run, p.Goal)
	if p.Summary != "" {
		fmt.Fprintf(t.Out, "summary: %s\n", p.Summary)
	}
	if p.Changes != nil {
		fmt.Fprintf(t.Out, "\n%s\n", strings.TrimRight(p.Changes.Diff(), "\n"))
	}
	WriteReport(t.Out, p.Report, p.Verified)
	if hold := held(p.Changes); len(hold) > 0 {
		fmt.Fprintf(t.Out, "REVIEW CAREFULLY: the change runs on your machine later or reads its environment:\n    %s\n", strings.Join(hold, "\n    "))
	}
	ans, err := t.choose(ctx, "[a]pply, [r]eject, or [d]efer? ", "ard")
	if err != nil || ans == 0 || ans == 'd' {
		return agent.Decision{Answer: agent.Defer}, err
	}
	if ans == 'a' {
		return agent.Decision{Answer: agent.AllowOnce}, nil
	}
	reason, err := t.readLine(ctx, "Reason (recorded with the run): ")
	if err != nil {
		return agent.Decision{Answer: agent.Deny, Reason: "rejected by the user"}, ignoreEOF(err)
	}
	if reason == "" {
		reason = "rejected by the user"
	}
	return agent.Decision{Answer: agent.Deny, Reason: reason}, nil
}

// WriteReport prints a verification report for a human: each check with
// phase, result, duration and the first locations, then the warnings and
// the verdict.
func WriteReport(w io.Writer, r *verify.Report, verified bool) {
	if r == nil {
		fmt.Fprintln(w, "verification: none (the contract has no checks): unverified")
		return
	}
	fmt.Fprintln(w, "verification:")
	for _, c := range r.Checks {
		status := "passed"
		if !c.Passed {
			status = fmt.Sprintf("FAILED (exit %d", c.ExitCode)
			if c.Signal != "" {
				status += ", signal " + c.Signal
			}
			if c.CapHit != "" {
				status += ", " + c.CapHit + " cap"
			}
			status += ")"
		}
		fmt.Fprintf(w, "  %-5s %s: %s in %s\n", c.Phase, c.Name, status, c.Duration.Round(time.Millisecond))
		for i, l := range c.Locations {
			if i == 5 {
				fmt.Fprintf(w, "      … %d more\n", len(c.Locations)-5)
				break
			}
			fmt.Fprintf(w, "      %s:%d: %s\n", l.Path, l.Line, l.Message)
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	fmt.Fprintln(w, "evidence:")
	for _, e := range r.Evidence() {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if r.NeedsHuman() {
		fmt.Fprintln(w, "  REVIEW CAREFULLY: the change touches its own checks:")
		for _, t := range r.TouchesChecks {
			fmt.Fprintf(w, "    %s\n", t)
		}
	}
	if verified {
		fmt.Fprintln(w, "  => verified")
	} else {
		fmt.Fprintln(w, "  => NOT verified")
	}
}

// choose prompts until the answer's first letter is one of letters; it
// returns 0 at end of input or after maxTries bad answers.
func (t *Terminal) choose(ctx context.Context, prompt, letters string) (byte, error) {
	for range maxTries {
		line, err := t.readLine(ctx, prompt)
		if err != nil {
			return 0, ignoreEOF(err)
		}
		if line != "" && strings.IndexByte(letters, lower(line[0])) >= 0 {
			return lower(line[0]), nil
		}
		fmt.Fprintf(t.Out, "please answer one of: %s\n", strings.Join(strings.Split(letters, ""), ", "))
	}
	fmt.Fprintln(t.Out, "no valid answer: deferring")
	return 0, nil
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// readLine prints prompt and reads one line (without its newline), a byte
// at a time so that input meant for a later prompt stays unread. It
// returns ctx's error as soon as ctx ends, even while In blocks.
func (t *Terminal) readLine(ctx context.Context, prompt string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fmt.Fprint(t.Out, prompt)
	if t.In == nil {
		return "", io.EOF
	}
	var sb strings.Builder
	for {
		r, err := t.readByte(ctx)
		if err != nil {
			return "", err
		}
		if r.n == 1 {
			if r.b == '\n' {
				break
			}
			if sb.Len() < 4096 {
				sb.WriteByte(r.b)
			}
		}
		if r.err != nil {
			if errors.Is(r.err, io.EOF) && sb.Len() > 0 {
				break
			}
			return "", fmt.Errorf("read answer: %w", r.err)
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.TrimRight(sb.String(), "\r")), nil
}

// readByte reads one byte of In through the reader goroutine, or returns
// ctx's error when ctx ends first (the read stays pending for the next
// call). t.mu is held.
func (t *Terminal) readByte(ctx context.Context) (readResult, error) {
	t.start.Do(func() {
		t.want, t.got = make(chan struct{}), make(chan readResult, 1)
		go func() {
			buf := make([]byte, 1)
			for range t.want {
				n, err := t.In.Read(buf)
				t.got <- readResult{b: buf[0], n: n, err: err}
			}
		}()
	})
	if !t.pending {
		t.want <- struct{}{}
		t.pending = true
	}
	select {
	case r := <-t.got:
		t.pending = false
		return r, nil
	case <-ctx.Done():
		return readResult{}, ctx.Err()
	}
}

// ignoreEOF turns end of input into "no answer" (deferral); other errors
// (cancellation, a broken terminal) are returned.
func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
