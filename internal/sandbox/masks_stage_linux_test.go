package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestMaskedInStagedWorkspace: a masked path inside a staged workspace
// stays unread in both tiers, by its path and through the working
// directory; the landlock tier's private copy leaves it out. Control: an
// unmasked sibling is read, and uncontained the secret is.
func TestMaskedInStagedWorkspace(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			dir := sandboxtest.Dir(t)
			secret := filepath.Join(dir, "secrets", "token.txt")
			os.MkdirAll(filepath.Dir(secret), 0o755)
			os.WriteFile(secret, []byte("MASKED-SECRET\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("PLAIN\n"), 0o644)
			st, err := NewStage(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			argv := []string{"sh", "-c", "cat secrets/token.txt plain.txt " + secret + "; true"}
			_, out := run(t, Spec{Argv: argv, Dir: dir, Stage: st, View: testMaskedView([]string{filepath.Join(dir, "secrets")}), Backend: tier})
			if strings.Contains(out, "MASKED-SECRET") || !strings.Contains(out, "PLAIN") {
				t.Errorf("%s tier: want the masked file unread and plain.txt read:\n%s", tier, out)
			}
			if got := control(t, dir, argv...); !strings.Contains(got, "MASKED-SECRET") {
				t.Errorf("uncontained control did not read the secret: %s", got)
			}
		})
	}
}
