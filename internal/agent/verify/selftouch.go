package verify

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// testFiles are test code and test data of the common ecosystems: a change
// to them changes what the checks assert.
var testFiles = []string{
	"**/*_test.go", "**/testdata/**",
	"**/test_*.py", "**/*_test.py", "**/conftest.py",
	"**/*.test.*", "**/*.spec.*", "**/__tests__/**",
	"tests/**", "**/tests/**", "test/**", "**/test/**", "spec/**", "**/spec/**",
	"src/test/**", "**/src/test/**",
}

// checkConfig are files that change what any check runs or how, whatever
// program it names: Go's module and workspace files, the Python test
// runners' settings, npm scripts, Cargo's manifest and build scripts,
// interpreter start-up hooks.
var checkConfig = []string{
	"go.mod", "**/go.mod", "go.work", "go.work.sum",
	"pytest.ini", "**/pytest.ini", "tox.ini", "noxfile.py", "**/sitecustomize.py", "**/usercustomize.py",
	"package.json", "**/package.json", ".npmrc", ".mocharc*", "jest.config.*", "vitest.config.*", "vite.config.*",
	"Cargo.toml", "**/Cargo.toml", "**/build.rs", ".cargo/config", ".cargo/config.toml",
	"pom.xml", "**/pom.xml", "build.gradle*", "**/build.gradle*", "settings.gradle*",
	// the test runners and dependencies themselves, vendored or installed
	// in the tree: patching them changes every verdict
	"vendor/**", "**/vendor/**", "**/node_modules/**", "**/site-packages/**", ".venv/**", "venv/**",
}

// testSettingsFiles carry test settings among other things: a change
// counts only when it touches a test section (see testSections).
var testSettingsFiles = []string{"pyproject.toml", "**/pyproject.toml", "setup.cfg", "**/setup.cfg"}

// TouchedChecks returns why the change set touches its own checks, one
// reason a line, sorted and without duplicates; nil when it does not.
// Reasons: it adds, edits, deletes or renames test files; it changes files
// that change what a check runs or how (see checkConfig, the build files
// of the program a check names, files named in a check's command, test
// sections of pyproject.toml and setup.cfg); it adds or changes code that
// runs when a package loads (Go init functions, TestMain, package-level
// variables initialised by a call; Python statements that run on import);
// it modifies the contract or its protect files. root is the workspace
// directory the changes are based on (for the files' old contents).
func TouchedChecks(v contract.Verify, changes []workspace.Change, contractPath, root string) []string {
	reasons, _ := touchedChecks(v, changes, contractPath, root)
	return reasons
}

// touchedChecks is TouchedChecks and the sorted workspace-relative paths
// the reasons are about.
func touchedChecks(v contract.Verify, changes []workspace.Change, contractPath, root string) ([]string, []string) {
	reasons := map[string]bool{}
	inputs, reported, _ := touchedInputs(v, changes, contractPath)
	for _, w := range inputs {
		reasons[w] = true
	}
	files := map[string]bool{}
	for p := range reported {
		files[p] = true
	}
	programs := map[string]bool{} // changed files that are executable after the change
	for _, c := range changes {
		if c.Op != workspace.OpDelete && c.Mode.Perm()&0o111 != 0 {
			programs[path.Clean(c.Path)] = true
		}
	}
	for p, why := range shadowedPrograms(v, programs, root, sandboxPath()) {
		reasons[why], files[p] = true, true
	}
	for p, why := range pyShadowed(v, changes, func(p string) bool { return existsAfter(root, changes, p) }) {
		reasons[why], files[p] = true, true
	}
	note := func(p, reason string) {
		reasons[reason] = true
		files[p] = true
	}
	for _, c := range changes {
		for _, p := range []string{c.Path, c.From} {
			if p == "" || reported[path.Clean(p)] {
				continue
			}
			p = path.Clean(p)
			switch {
			case matchAny(p, testFiles):
				note(p, fmt.Sprintf("%s %s, a test file", verb(c, p), p))
			case matchAny(p, checkConfig):
				note(p, fmt.Sprintf("%s %s, which changes what the checks run or how", verb(c, p), p))
			case matchAny(p, compiledCode) && c.Op != workspace.OpDelete && !(c.From != "" && p == path.Clean(c.From)):
				note(p, fmt.Sprintf("%s %s, compiled code that runs unseen by these marks (byte code, an extension module, assembly or a library)", verb(c, p), p))
			case matchAny(p, testSettingsFiles):
				if sections := testSections(oldContent(root, c, p), newContent(c, p)); sections != "" {
					note(p, fmt.Sprintf("changes the test settings (%s) of %s", sections, p))
				}
			}
		}
		if c.Op == workspace.OpDelete {
			continue
		}
		old := oldContent(root, c, c.Path)
		switch {
		case strings.HasSuffix(c.Path, ".go"):
			for _, r := range append(goInitCode(c.Path, old, c.Content), goTakeover(c.Path, old, c.Content)...) {
				note(path.Clean(c.Path), r)
			}
		case strings.HasSuffix(c.Path, ".py"):
			for _, r := range append(pyImportCode(c.Path, old, c.Content), pyTakeover(c.Path, old, c.Content)...) {
				note(path.Clean(c.Path), r)
			}
		case isJS(c.Path):
			for _, r := range jsTakeover(c.Path, old, c.Content) {
				note(path.Clean(c.Path), r)
			}
		case strings.HasSuffix(c.Path, ".rs"):
			if rustTestsChanged(old, c.Content) {
				note(path.Clean(c.Path), fmt.Sprintf("edits the tests inside %s (#[cfg(test)] or #[test])", c.Path))
			}
			for _, r := range rsTakeover(c.Path, old, c.Content) {
				note(path.Clean(c.Path), r)
			}
		}
	}
	return sortedKeys(reasons), sortedKeys(files)
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func verb(c workspace.Change, p string) string {
	switch {
	case c.From != "" && p == path.Clean(c.From):
		return "renames away"
	case c.From != "":
		return "renames to"
	case c.Op == workspace.OpDelete:
		return "deletes"
	case c.Op == workspace.OpCreate:
		return "adds"
	}
	return "edits"
}

func matchAny(p string, globs []string) bool {
	return len(matching(map[string]bool{p: true}, globs)) > 0
}

// oldContent is the workspace's content of p before the change (the
// rename source for the new name of a renamed file); nil when absent.
func oldContent(root string, c workspace.Change, p string) []byte {
	if root == "" {
		return nil
	}
	if c.From != "" && p == path.Clean(c.Path) {
		p = path.Clean(c.From)
	}
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		return nil
	}
	return b
}

// existsAfter reports whether the workspace-relative path p exists in the
// workspace with changes on top.
func existsAfter(root string, changes []workspace.Change, p string) bool {
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		switch {
		case path.Clean(c.Path) == p:
			return c.Op != workspace.OpDelete
		case c.From != "" && path.Clean(c.From) == p:
			return false
		}
	}
	if root == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
	return err == nil
}

func newContent(c workspace.Change, p string) []byte {
	if c.Op == workspace.OpDelete || (c.From != "" && p == path.Clean(c.From)) {
		return nil
	}
	return c.Content
}

// testSections names the test sections of a pyproject.toml or setup.cfg
// that differ between old and new: TOML/INI sections whose header names
// pytest, tox, nox, coverage or a test environment. "" when none differ.
func testSections(old, new []byte) string {
	a, b := sectionsOf(old), sectionsOf(new)
	var diff []string
	for name := range union(a, b) {
		if isTestSection(name) && a[name] != b[name] {
			diff = append(diff, "["+name+"]")
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, ", ")
}

func sectionsOf(data []byte) map[string]string {
	out := map[string]string{}
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			cur = strings.Trim(t, "[] ")
			continue
		}
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			continue
		}
		out[cur] += t + "\n"
	}
	return out
}

func union(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func isTestSection(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"pytest", "tox", "nox", "coverage", "testenv", "unittest", "hatch.envs"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// rustTestsChanged reports whether a Rust file's inline tests differ: the
// text from its first #[cfg(test)] on, or its #[test] and #[ignore]
// attributes with the line after each.
func rustTestsChanged(old, new []byte) bool {
	tail := func(b []byte) string {
		s := string(b)
		if i := strings.Index(s, "#[cfg(test)]"); i >= 0 {
			return s[i:]
		}
		return ""
	}
	marks := func(b []byte) string {
		lines := strings.Split(string(b), "\n")
		var out []string
		for i, l := range lines {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "#[test]") || strings.HasPrefix(t, "#[ignore") || strings.HasPrefix(t, "#[should_panic") {
				out = append(out, t)
				if i+1 < len(lines) {
					out = append(out, strings.TrimSpace(lines[i+1]))
				}
			}
		}
		return strings.Join(out, "\n")
	}
	return tail(old) != tail(new) || marks(old) != marks(new)
}
