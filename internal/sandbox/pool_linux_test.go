package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			p := keepWarm(t)
			a, b := outsideDir(t), outsideDir(t)
			marker := "ONLY-FOR-RUN-A-" + tier
			secret := filepath.Join(a, "secret")
			if err := os.WriteFile(secret, []byte(marker+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			planted := filepath.Join(a, "planted")
			specA := Spec{Argv: []string{"cat", secret}, Dir: a, Writable: []string{a}, Backend: tier}
			specB := Spec{Argv: []string{"sh", "-c", "cat " + secret + "; echo x > " + planted + "; echo end"},
				Dir: b, Writable: []string{b}, Backend: tier}
			before := p.os.stages.claims.Load()
			for i := 0; i < 3; i++ {
				if _, output := runTier(t, specA); !strings.Contains(output, marker) {
					t.Fatalf("round %d: control: run A could not read its own secret:\n%s", i, output)
				}
				p.wait() // the next stage is started ahead with A's view as its hint
				out, output := runTier(t, specB)
				if strings.Contains(output, marker) || !strings.Contains(output, "end") {
					t.Errorf("round %d: run B after A through the same pool read A's secret (exit %d):\n%s", i, out.ExitCode, output)
				}
				if _, err := os.Lstat(planted); err == nil {
					t.Errorf("round %d: run B wrote into run A's directory", i)
					os.Remove(planted)
				}
				p.wait()
			}
			if got := p.os.stages.claims.Load() - before; got < 4 {
				t.Errorf("%d of 6 runs were served by a warm stage, want at least 4: the pool's path was not tested", got)
			}
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
			p := keepWarm(t)
			shared, work := outsideDir(t), outsideDir(t)
			marker := "ONLY-IN-ONE-VIEW-" + tier
			secret := filepath.Join(shared, "secret")
			if err := os.WriteFile(secret, []byte(marker+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := func(v View) Spec {
				return Spec{Argv: []string{"sh", "-c", "cat " + secret + "; echo end"}, Dir: work, Writable: []string{work}, Backend: tier, View: v}
			}
			wide, narrow := spec(testView(shared)), spec(testView())
			before := p.os.stages.claims.Load()
			for i := 0; i < 3; i++ {
				if _, output := runTier(t, wide); !strings.Contains(output, marker) {
					t.Fatalf("round %d: control: the run whose view holds %s could not read it:\n%s", i, shared, output)
				}
				p.wait()
				if out, output := runTier(t, narrow); strings.Contains(output, marker) || !strings.Contains(output, "end") {
					t.Errorf("round %d: the run whose view lacks %s read it through the pool (exit %d):\n%s", i, shared, out.ExitCode, output)
				}
				p.wait()
			}
			if got := p.os.stages.claims.Load() - before; got < 4 {
				t.Errorf("%d of 6 runs were served by a warm stage, want at least 4: the pool's path was not tested", got)
			}
		})
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
