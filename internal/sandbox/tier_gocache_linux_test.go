package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestTierGoCacheScratch: in the tiers without an overlay (landlock,
// floor) the Go build cache listed as scratch gets a private layer through
// the gocache stage as GOCACHEPROG. `go list -export` (what go/packages
// tools such as staticcheck run) of a package the host cache holds is
// answered from the host cache in place, and of a package it never
// compiled stores what it compiles; the host cache is unchanged after
// both. Pairs: without the layer the store fails in the landlock tier
// (read-only cache) and lands in the host cache in the floor tier, and the
// same commands uncontained work.
func TestTierGoCacheScratch(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	var tiers []string
	for _, tier := range tiersHere(t) {
		if tier != BackendLinux { // the linux tier layers with an overlay: TestScratchLayer
			tiers = append(tiers, tier)
		}
	}
	tiers = append(tiers, BackendFloor)
	cache, mod := sandboxtest.Dir(t), sandboxtest.Dir(t)
	writeTree(t, mod, map[string]string{
		"go.mod":     "module example.com/old\n\ngo 1.22\n",
		"old.go":     "package old\n\nfunc Twice(n int) int { return 2 * n }\n",
		"new/new.go": "package new\n\nfunc Thrice(n int) int { return 3 * n }\n",
	})
	env := []string{"GOCACHE=" + cache, "GOTOOLCHAIN=local", "GOFLAGS=", "GOTELEMETRY=off"}
	list := func(pkg string) []string {
		return []string{goBin, "list", "-export", "-f", "export={{.Export}}", pkg}
	}
	// The user's own build fills the host cache with the root package.
	warm := exec.Command(list(".")[0], list(".")[1:]...)
	warm.Dir, warm.Env = mod, append(os.Environ(), env...)
	if out, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("uncontained go list -export to fill the host cache: %v\n%s", err, out)
	}
	before := sandboxtest.TreeListing(t, cache)
	ctx := func(tier string, argv []string, scratch bool) (*Outcome, string) {
		t.Helper()
		// The module is a writable root so the floor runs in it rather
		// than in a private copy, whose other path would change the
		// packages' cache keys.
		s := Spec{Backend: tier, Argv: argv, Dir: mod, Writable: []string{mod}, Env: env, Limits: Limits{Wall: 2 * time.Minute}}
		if scratch {
			s.Scratch = []string{cache}
		}
		return run(t, s)
	}
	// layered runs the layered cases; prog is the cache program the
	// mechanism must name.
	layered := func(t *testing.T, tier, prog string) {
		t.Helper()
		out, output := ctx(tier, list("."), true)
		if out.ExitCode != 0 || !strings.Contains(output, "export="+cache+"/") {
			t.Errorf("go list -export of a package the host cache holds: exit %d, want its export data read from the host cache %s:\n%s", out.ExitCode, cache, output)
		}
		if !slices.ContainsFunc(out.Mechanisms, func(m Mechanism) bool {
			return m.Name == "scratch-layer" && m.State == StateApplied && strings.Contains(m.Detail, "GOCACHEPROG "+prog)
		}) {
			t.Errorf("mechanisms %+v lack an applied scratch-layer through %s", out.Mechanisms, prog)
		}
		out, output = ctx(tier, list("./new"), true)
		if out.ExitCode != 0 || !strings.Contains(output, "export=") || strings.Contains(output, "export="+cache) {
			t.Errorf("go list -export of a package the host never compiled: exit %d, want it stored in the private cache:\n%s", out.ExitCode, output)
		}
		if after := sandboxtest.TreeListing(t, cache); after != before {
			t.Fatalf("the host cache changed under the scratch layer:\nbefore %s\nafter  %s", before, after)
		}
	}
	for _, tier := range tiers {
		t.Run(tier, func(t *testing.T) {
			useReexec(t)
			self, _ := os.Executable()
			self, _ = filepath.EvalSymlinks(self)
			layered(t, tier, self)
			// Pair: without the layer the store fails (landlock) or lands
			// in the host cache (floor).
			out, output := ctx(tier, list("./new"), false)
			changed := sandboxtest.TreeListing(t, cache) != before
			switch tier {
			case BackendFloor:
				if out.ExitCode != 0 || !changed {
					t.Errorf("floor without the layer: exit %d, host cache changed %v; want the store to land in the host cache, or the layer proves nothing:\n%s", out.ExitCode, changed, output)
				}
				restoreCache(t, cache, before)
				// The directories' times moved with the control's writes:
				// the later cases compare against the cache as it is now.
				before = sandboxtest.TreeListing(t, cache)
			default:
				if out.ExitCode == 0 || changed {
					t.Errorf("%s without the layer: exit %d, host cache changed %v; want the store refused:\n%s", tier, out.ExitCode, changed, output)
				}
			}
		})
		// What `make build` ships: the go command starts the small init
		// program as its cache program. In the parent run only: the
		// re-runs' copy of it is TestTierContainment's to check (it runs
		// with the command's restrictions, the same in every mode).
		if os.Getenv(asUserEnv) != "" {
			continue
		}
		t.Run(tier+" with the small init program", func(t *testing.T) {
			useSmallInit(t)
			layered(t, tier, filepath.Join(stageProgram().File.Name()))
		})
	}
	ctl := exec.Command(list("./new")[0], list("./new")[1:]...)
	ctl.Dir, ctl.Env = mod, append(os.Environ(), "GOCACHE="+t.TempDir(), "GOTOOLCHAIN=local", "GOFLAGS=")
	if out, err := ctl.CombinedOutput(); err != nil {
		t.Fatalf("uncontained control failed, so the cases prove nothing: %v\n%s", err, out)
	}
}

// restoreCache removes what a run added to the cache since listing before
// (the floor's control stores into the host cache).
func restoreCache(t *testing.T, cache, before string) {
	t.Helper()
	filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && !strings.Contains(before, strings.TrimPrefix(p, cache)+" ") {
			os.Remove(p)
		}
		return nil
	})
}
