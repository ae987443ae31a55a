package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestPoolKeepsRunsApart: two kinds of run alternate through one pool,
// each with its own working directory as its only writable root. What
// the pool keeps from one (the stage started ahead with its view as a
// hint, the spare cgroups and private directory, the cached views) must
// not let the other see it: the second run cannot read the first's
// secret nor write into its directory, while the first run itself reads
// it (the control), every time. Both tiers; the runs after the first are
// served by warm stages (counted), so the pool's path is what is tested.
func TestPoolKeepsRunsApart(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			useReexec(t)
			a, b := sandboxtest.Dir(t), sandboxtest.Dir(t)
			marker := "ONLY-FOR-RUN-A-" + tier
			secret := writeSecret(t, a, marker)
			planted := filepath.Join(a, "planted")
			specA := Spec{Argv: []string{"cat", secret}, Dir: a, Writable: []string{a}, Backend: tier}
			specB := Spec{Argv: []string{"sh", "-c", "cat " + secret + "; echo x > " + planted + "; echo end"},
				Dir: b, Writable: []string{b}, Backend: tier}
			alternateThroughPool(t, specA, specB, marker, func(round int) {
				if _, err := os.Lstat(planted); err == nil {
					t.Errorf("round %d: run B wrote into run A's directory", round)
					os.Remove(planted)
				}
			})
		})
	}
}

// TestPoolKeepsViewsApart: two runs that differ only in their View (the
// same working directory and writable root) alternate through one pool:
// the one whose view holds a directory reads its secret (the control),
// the other, served by a stage started ahead with the first's view as
// its hint and by the pool's view caches, never does. Both tiers.
func TestPoolKeepsViewsApart(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			useReexec(t)
			shared, work := sandboxtest.Dir(t), sandboxtest.Dir(t)
			marker := "ONLY-IN-ONE-VIEW-" + tier
			secret := writeSecret(t, shared, marker)
			spec := func(v View) Spec {
				return Spec{Argv: []string{"sh", "-c", "cat " + secret + "; echo end"}, Dir: work, Writable: []string{work}, Backend: tier, View: v}
			}
			alternateThroughPool(t, spec(testView(shared)), spec(testView()), marker, nil)
		})
	}
}

// writeSecret writes marker into dir/secret and returns its path.
func writeSecret(t *testing.T, dir, marker string) string {
	t.Helper()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte(marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return secret
}

// alternateThroughPool runs allowed and denied in turn, three rounds,
// through one pool: allowed must print marker (the control), denied must
// not, and must get as far as its "end"; check, if set, judges each
// round further. At least 4 of the 6 runs must have been served by a
// warm stage (each started ahead with the other run's view as its hint),
// or the pool's path was not tested.
func alternateThroughPool(t *testing.T, allowed, denied Spec, marker string, check func(round int)) {
	t.Helper()
	p := keepWarm(t)
	before := p.os.stages.claims.Load()
	for i := 0; i < 3; i++ {
		if _, output := runTier(t, allowed); !strings.Contains(output, marker) {
			t.Fatalf("round %d: control: the allowed run could not read the secret:\n%s", i, output)
		}
		p.wait() // the next stage is started ahead with the allowed run's view as its hint
		if out, output := runTier(t, denied); strings.Contains(output, marker) || !strings.Contains(output, "end") {
			t.Errorf("round %d: the other run through the same pool read the secret (exit %d):\n%s", i, out.ExitCode, output)
		}
		if check != nil {
			check(i)
		}
		p.wait()
	}
	if got := p.os.stages.claims.Load() - before; got < 4 {
		t.Errorf("%d of 6 runs were served by a warm stage, want at least 4: the pool's path was not tested", got)
	}
}

// TestTierContainmentThroughPool runs the whole containment table in
// each tier through a pool (TestTierContainment runs it cold, and a part
// of it on warm stages): every case is contained when its stage was
// started ahead, its groups and private directory made ahead, its view
// cached by the runs before.
func TestTierContainmentThroughPool(t *testing.T) {

	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			useReexec(t)
			p := keepWarm(t)
			before := p.os.stages.claims.Load()
			tierContainment(t, tier, nil)
			if p.os.stages.claims.Load() == before {
				t.Error("no run used a warm stage")
			}
		})
	}
}
