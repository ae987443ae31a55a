package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestZeroViewRefused: a Spec without a View is refused before anything
// starts in the tiers that apply one (the automatic choice here, and each
// such tier this platform has), with an error naming the fix; the floor,
// which applies no view, runs it (the control).
func TestZeroViewRefused(t *testing.T) {
	tiers := []string{""}
	for _, b := range candidates() {
		if b.name() == BackendLinux || b.name() == BackendLandlock || b.name() == BackendMacOS {
			tiers = append(tiers, b.name())
		}
	}
	if len(tiers) == 1 {
		t.Skip("no tier here applies a view")
	}
	for _, tier := range tiers {
		out, err := testRunner().Run(context.Background(), &Spec{Argv: trueArgv(), Dir: t.TempDir(), Backend: tier})
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "policy.Default") || !strings.Contains(err.Error(), "ioh.DefaultView") {
			t.Errorf("tier %q, zero View: %+v, %v; want ErrBadSpec naming policy.Default and ioh.DefaultView", tier, out, err)
		}
	}
	out, err := testRunner().Run(context.Background(), &Spec{Argv: trueArgv(), Dir: t.TempDir(), Backend: BackendFloor})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("floor, zero View: %+v, %v; want it to run", out, err)
	}
}
