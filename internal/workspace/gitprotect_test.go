package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// isolateGit gives a test a HOME of its own with no system configuration.
func isolateGit(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	return home
}

// TestHostRunPaths reads the hooks directory, the included files (include
// and includeIf, recursively, relative to the including file), the
// attributes and excludes files and the commands' scripts inside the root
// from the repository's configuration, and names .husky and .githooks;
// what lies outside the root and what git does not run is left out.
func TestHostRunPaths(t *testing.T) {
	isolateGit(t)
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".git/config": "[core]\n\thooksPath = .husky/_\n\tfsmonitor = ./tools/fsmon.sh\n" +
			"\tattributesFile = conf/attrs\n" +
			"[include]\n\tpath = ../.gitconfig.local\n" +
			"[includeIf \"gitdir:/never/\"]\n\tpath = ../cfg/cond.inc\n" +
			"[remote \"origin\"]\n\turl = ../elsewhere.git\n" +
			"[branch \"main\"]\n\tmerge = refs/heads/main\n" +
			"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\tsmudge = sh scripts/smudge.sh %f\n",
		".gitconfig.local": "[core]\n\texcludesFile = ~/outside-root\n[include]\n\tpath = nested/more.inc\n",
		"nested/more.inc":  "[alias]\n\tx = !bin/run-x --flag\n[core]\n\tsshCommand = \"ssh -F ssh/config\"\n",
		"cfg/cond.inc":     "[diff \"bin\"]\n\ttextconv = hexdump\n",
		"hexdump":          "#!/bin/sh\n",
	})
	got, err := HostRunPaths(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".gitconfig.local", ".githooks", ".husky", ".husky/_", "bin/run-x", "cfg/cond.inc",
		"conf/attrs", "hexdump", "nested/more.inc", "scripts/smudge.sh", "ssh/config", "tools/fsmon.sh",
	}
	if !slices.Equal(got, want) {
		t.Errorf("HostRunPaths:\n got %q\nwant %q", got, want)
	}
}

// TestHostRunPathsHooksAtTop: a core.hooksPath that is the work tree's
// top (here set in the global configuration, as "." relative to the
// work tree) makes the hook files there what runs; a linked work tree's
// config.worktree is read too.
func TestHostRunPathsHooksAtTop(t *testing.T) {
	home := isolateGit(t)
	writeTree(t, home, map[string]string{".gitconfig": "[core]\n\thooksPath = .\n"})
	main, root := t.TempDir(), t.TempDir()
	gd := filepath.Join(main, ".git", "worktrees", "w")
	writeTree(t, main, map[string]string{".git/config": "", ".git/worktrees/w/commondir": "../..\n",
		".git/worktrees/w/config.worktree": "[include]\n\tpath = " + filepath.Join(root, "wt.inc") + "\n"})
	writeTree(t, root, map[string]string{".git": "gitdir: " + gd + "\n"})
	got, err := HostRunPaths(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"pre-commit", "post-checkout", "wt.inc", ".husky"} {
		if !slices.Contains(got, p) {
			t.Errorf("%s missing from %q", p, got)
		}
	}
	for _, p := range got {
		if p == "." || strings.HasPrefix(p, "../") || filepath.IsAbs(p) {
			t.Errorf("%q is not a path inside the root", p)
		}
	}
}

// TestHostRunPathsBounds: an include cycle stops at git's depth with an
// error that names it, an unreadable configuration is an error, and a
// repository without configuration has only the names.
func TestHostRunPathsBounds(t *testing.T) {
	isolateGit(t)
	root := t.TempDir()
	got, err := HostRunPaths(root)
	if err != nil || !slices.Equal(got, []string{".githooks", ".husky"}) {
		t.Errorf("no configuration: %q, %v", got, err)
	}
	writeTree(t, root, map[string]string{".git/config": "[include]\n\tpath = ../loop.inc\n", "loop.inc": "[include]\n\tpath = loop.inc\n"})
	got, err = HostRunPaths(root)
	if err == nil || !strings.Contains(err.Error(), "deeper than 10") {
		t.Errorf("include cycle: err = %v", err)
	}
	if !slices.Contains(got, "loop.inc") {
		t.Errorf("include cycle: the paths found so far are returned, got %q", got)
	}
	if !sandboxtest.IsRoot() { // root reads a file of mode 0
		cfg := filepath.Join(root, ".git", "config")
		if err := os.Chmod(cfg, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := HostRunPaths(root); err == nil || !strings.Contains(err.Error(), cfg) {
			t.Errorf("unreadable configuration: err = %v", err)
		}
	}
}

// TestHostRunPathsAgreesWithGit checks the parser against git itself: the
// hooks directory and the included files git reports are among the paths.
func TestHostRunPathsAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	isolateGit(t)
	root := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("config", "core.hooksPath", "hooks dir")
	git("config", "include.path", "../.gitconfig.local")
	writeTree(t, root, map[string]string{".gitconfig.local": "[core]\n\tfsmonitor = \"./fs mon\"\n", "fs mon": "#!/bin/sh\n"})
	if v := git("config", "core.fsmonitor"); v != "./fs mon" {
		t.Fatalf("git reads core.fsmonitor = %q", v)
	}
	got, err := HostRunPaths(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"hooks dir", ".gitconfig.local", "fs mon"} {
		if !slices.Contains(got, p) {
			t.Errorf("%s missing from %q", p, got)
		}
	}
}
