package sandboxtest

import (
	"os"
	"testing"
)

// NoUsernsEnv marks a re-run of a test binary where this process cannot
// create user namespaces (Rerun.NoUserns).
const NoUsernsEnv = "IOH_TEST_NO_USERNS"

// NoUserns reports whether this process is a re-run without user
// namespaces.
func NoUserns() bool { return os.Getenv(NoUsernsEnv) != "" }

// A Tier is a sandbox tier and what its probe said on this machine. The
// probe is the sandbox's own (the backend's probe, or sandbox.Doctor's
// report), handed in by the caller.
type Tier struct {
	Name string
	Err  error // why it cannot run here; nil when it can
	// Userns says the tier needs user namespaces: in a re-run without
	// them it must fail.
	Userns bool
}

// Tiers returns the names of the tiers a test runs under here, strongest
// first, from tiers (strongest first). The last, the weakest, must run
// (Unavailable otherwise); a stronger one that cannot fails the test in
// CI and is left out, with the reason logged, elsewhere. In a re-run
// without user namespaces a tier that needs them must fail and is left
// out.
func Tiers(t testing.TB, tiers ...Tier) []string {
	t.Helper()
	if base := tiers[len(tiers)-1]; base.Err != nil {
		Unavailable(t, "the %s tier cannot run here: %v", base.Name, base.Err)
	}
	var names []string
	for _, tier := range tiers {
		switch {
		case tier.Userns && NoUserns():
			if tier.Err == nil {
				t.Fatalf("user namespaces were to be unavailable in this re-run, but the %s tier works", tier.Name)
			}
		case tier.Err == nil:
			names = append(names, tier.Name)
		case CI():
			t.Fatalf("the %s tier cannot run in CI: %v", tier.Name, tier.Err)
		default:
			t.Logf("the %s tier cannot run here (%v); testing the others only", tier.Name, tier.Err)
		}
	}
	return names
}
