package contain

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWithheld judges every file (git-ignored ones too), skips .git, and
// returns sorted slash paths of what allow refuses.
func TestWithheld(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{".env", "a/.env.prod", "a/main.go", ".gitignore", ".git/config", "node_modules/x/.env", "keys/id.pem"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("x"), 0o644)
	}
	var asked []string
	got, err := Withheld(root, func(rel string) bool {
		asked = append(asked, rel)
		return !strings.Contains(rel, ".env") && !strings.HasSuffix(rel, ".pem")
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".env", "a/.env.prod", "keys/id.pem", "node_modules/x/.env"}; !slices.Equal(got, want) {
		t.Errorf("Withheld = %q, want %q", got, want)
	}
	if slices.Contains(asked, ".git/config") {
		t.Errorf(".git was walked: %q", asked)
	}
	if _, err := Withheld(filepath.Join(root, "missing"), func(string) bool { return false }); err == nil {
		t.Error("a missing root is not an error")
	}
}
