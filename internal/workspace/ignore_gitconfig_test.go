package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfigString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  ~/x  ", "~/x"},
		{`"~/a b" ; comment`, "~/a b"},
		{`/p#q`, "/p"},
		{`"/p#q"`, "/p#q"},
		{`a\"b`, `a"b`},
		{`a\\b`, `a\b`},
		{`"x " `, "x "},
		{`a\tb`, "a\tb"},
	}
	for _, tt := range tests {
		if got := configString(tt.in); got != tt.want {
			t.Errorf("configString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestGlobalExcludesFile finds core.excludesFile the way git does: the
// last value over the configuration files, sections and keys in any case,
// subsections not counted, includes followed, ~/ expanded, and the XDG
// default without one.
func TestGlobalExcludesFile(t *testing.T) {
	home, xdg, repo := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	common := filepath.Join(repo, ".git")
	writeTree(t, repo, map[string]string{".git/config": "[core]\n\tbare = false\n"})
	if got, want := globalExcludesFile(common), filepath.Join(xdg, "git", "ignore"); got != want {
		t.Errorf("default: %s, want %s", got, want)
	}
	writeTree(t, home, map[string]string{
		".gitconfig":   "[Core]\n\tExcludesFile = ~/first\n[core \"sub\"]\n\texcludesfile = /not-this\n[include]\n\tpath = extra.inc\n",
		"extra.inc":    "[core]\nexcludesfile = \"~/from include\" # later wins\n",
		"unrelated.rc": "",
	})
	if got, want := globalExcludesFile(common), filepath.Join(home, "from include"); got != want {
		t.Errorf("global config: %s, want %s", got, want)
	}
	writeTree(t, repo, map[string]string{".git/config": "[core]\n\texcludesFile = /repo/wins\n"})
	if got := globalExcludesFile(common); got != "/repo/wins" {
		t.Errorf("repository config: %s, want /repo/wins", got)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "unrelated.rc"))
	writeTree(t, repo, map[string]string{".git/config": ""})
	if got, want := globalExcludesFile(common), filepath.Join(xdg, "git", "ignore"); got != want {
		t.Errorf("GIT_CONFIG_GLOBAL replaces ~/.gitconfig: %s, want %s", got, want)
	}
}
