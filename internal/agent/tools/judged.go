package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// A call is judged before it runs: the policy (and the approver) see its
// acts, then Call acts. Between the two, the workspace may change (a
// symlink appears while the user answers a prompt). So Call decodes its
// arguments again through the same function Acts used and acts only when
// every act it is about to perform is one that was judged.

type judgedKey struct{}

// WithJudged returns ctx carrying the acts the policy allowed for one call.
func WithJudged(ctx context.Context, acts []Act) context.Context {
	return context.WithValue(ctx, judgedKey{}, append([]Act{}, acts...))
}

// checkJudged returns an error unless every act is among those judged for
// the call. A context without judged acts (a tool driven directly, outside
// the agent loop) passes.
func checkJudged(ctx context.Context, acts []Act) error {
	judged, ok := ctx.Value(judgedKey{}).([]Act)
	if !ok {
		return nil
	}
	for _, a := range acts {
		found := false
		for _, j := range judged {
			if a.Act == j.Act && a.Target == j.Target && a.Resolved == j.Resolved {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s %s (resolving to %s) was not what the policy judged for this call: the workspace changed under it; try again", a.Act, a.Target, a.Resolved)
		}
	}
	return nil
}

// bound recomputes a call's acts with acts and checks them against the
// judged ones: the guard every workspace tool's Call starts with. It
// returns the acts, which are what the call then acts on.
func bound(ctx context.Context, args json.RawMessage, acts func(json.RawMessage) ([]Act, error)) ([]Act, error) {
	as, err := acts(args)
	if err != nil {
		return nil, err
	}
	return as, checkJudged(ctx, as)
}

// writtenBy lists the files acts write (their resolved, root-relative
// paths, once each, in order): what a workspace tool that succeeded
// changed, reported in Result.Wrote.
func writtenBy(acts []Act) []string {
	var out []string
	for _, a := range acts {
		if a.Act == policy.ActWrite && !slices.Contains(out, a.Resolved) {
			out = append(out, a.Resolved)
		}
	}
	return out
}
