package agent

import (
	"context"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// plainVerify runs each check once on workspace ⊕ changes and compares its
// exit code: the fallback when no VerifyFunc is configured. It does no
// red/green phase (Proves is set only when red/green was not asked) and
// parses no locations; the real one is verify.Run.
func plainVerify(ctx context.Context, sb contain.Sandbox, root string, changes []workspace.Change, v contract.Verify, _ trace.Sink) (*verify.Report, error) {
	if sb == nil {
		return nil, fmt.Errorf("no sandbox to run checks in")
	}
	rep := &verify.Report{Passed: true, Proves: !v.RedGreen}
	for _, c := range v.Checks {
		res, err := sb.Exec(ctx, &contain.Request{Argv: c.Run, Shell: c.Shell, Root: root, Changes: changes, Network: c.Network, Timeout: c.Timeout})
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", c.Name, err)
		}
		cr := verify.CheckResult{Name: c.Name, Passed: res.Passed(c.ExpectExit), ExitCode: res.ExitCode, Signal: res.Signal,
			CapHit: res.CapHit, Duration: res.Duration, Output: string(res.Output), Backend: res.Backend, Phase: "green"}
		rep.Checks = append(rep.Checks, cr)
		if !cr.Passed {
			rep.Passed = false
			break
		}
	}
	return rep, nil
}
