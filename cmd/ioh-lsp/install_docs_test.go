package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestOneInstallPath: every page that says how to install the server says
// `make install` and none says `go install …@latest` (which installs no
// sandbox init program); control: the Makefile's install target installs
// both programs.
func TestOneInstallPath(t *testing.T) {
	for _, p := range []string{"README.md", "docs/editors.md", "editors/neovim/doc/ioh.txt", "editors/vscode/README.md"} {
		b, err := os.ReadFile("../../" + p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "make install") {
			t.Errorf("%s does not say make install", p)
		}
		if m := regexp.MustCompile(`go install github\.com/ioh-lsp/\S*`).FindString(string(b)); m != "" {
			t.Errorf("%s says %q", p, m)
		}
	}
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	_, target, _ := strings.Cut(string(b), "\ninstall:\n")
	target, _, _ = strings.Cut(target, "\n\n")
	for _, cmd := range []string{"./cmd/ioh-sandbox-init", "./cmd/ioh-lsp"} {
		if !strings.Contains(target, "install") || !strings.Contains(target, cmd) {
			t.Errorf("make install does not install %s:\n%s", cmd, target)
		}
	}
}
