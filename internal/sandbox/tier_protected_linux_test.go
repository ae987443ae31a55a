package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestLandlockProtectedDirs: the landlock tier, like the linux tier, keeps
// .git and the other protected directories of a writable root read-only
// (a hook written there would run on the host at the next git command),
// while the rest of the root stays writable. Control: the same writes
// succeed uncontained.
func TestLandlockProtectedDirs(t *testing.T) {
	tiersHere(t) // skips (or fails in CI) when the landlock tier cannot run
	work := sandboxtest.Dir(t)
	for _, d := range []string{".git/hooks", ".ioh", ".vscode", ".idea", ".github/workflows", "src"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	targets := []string{".git/hooks/post-checkout", ".git/config", ".ioh/config.yaml", ".vscode/tasks.json",
		".idea/workspace.xml", ".github/workflows/x.yml"}
	const tryAll = `for p; do if printf x > "$p" 2>/dev/null; then echo "WROTE $p"; fi; done`
	var paths []string
	for _, rel := range targets {
		paths = append(paths, filepath.Join(work, rel))
	}
	argv := append([]string{"sh", "-c", tryAll, "sh"}, paths...)
	_, output := run(t, Spec{Argv: argv, Writable: []string{work}, Dir: work, Backend: BackendLandlock})
	for _, p := range paths {
		if strings.Contains(output, "WROTE "+p) {
			t.Errorf("%s written inside the landlock tier", p)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists on the host after the run", p)
		}
	}
	if got := control(t, work, argv...); strings.Count(got, "WROTE ") != len(paths) {
		t.Errorf("uncontained control did not write every target:\n%s", got)
	}
	for _, p := range paths {
		os.Remove(p)
	}
	// The rest of the root stays writable inside.
	ok := filepath.Join(work, "src", "main.go")
	if _, output := run(t, Spec{Argv: []string{"sh", "-c", "printf x > " + ok}, Writable: []string{work}, Dir: work, Backend: BackendLandlock}); output != "" {
		t.Errorf("writing %s inside: %s", ok, output)
	}
	if b, err := os.ReadFile(ok); err != nil || string(b) != "x" {
		t.Errorf("%s not written inside the landlock tier: %v %q", ok, err, b)
	}

	// A root without them: what the command creates does not survive.
	fresh := sandboxtest.Dir(t)
	create := `mkdir -p .git/hooks .vscode && printf x > .git/hooks/post-checkout && printf x > .vscode/tasks.json && echo MADE`
	out, output := run(t, Spec{Argv: []string{"sh", "-c", create}, Writable: []string{fresh}, Dir: fresh, Backend: BackendLandlock})
	if !strings.Contains(output, "MADE") {
		t.Fatalf("the command could not create them inside, so the sweep is not tested: %s", output)
	}
	for _, d := range []string{".git", ".vscode"} {
		if _, err := os.Lstat(filepath.Join(fresh, d)); err == nil {
			t.Errorf("%s made inside survived the run", d)
		}
	}
	swept := false
	for _, m := range out.Mechanisms {
		swept = swept || (m.Name == "protected-dirs-sweep" && m.State == StateApplied)
	}
	if !swept {
		t.Errorf("the outcome does not say what was removed: %+v", out.Mechanisms)
	}
	if got := control(t, fresh, "sh", "-c", create); !strings.Contains(got, "MADE") {
		t.Errorf("uncontained control: %s", got)
	}
	if _, err := os.Lstat(filepath.Join(fresh, ".git", "hooks", "post-checkout")); err != nil {
		t.Errorf("uncontained control did not create the hook: %v", err)
	}
}
