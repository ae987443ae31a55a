package verify

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/ioh-lsp/ioh-lsp/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// toolInputs are files that change what a tool does when it runs, keyed by
// the program's base name: a change set that edits them can weaken a check
// without touching the code under test.
var toolInputs = map[string][]string{
	"make":    {"Makefile", "makefile", "GNUmakefile", "**/*.mk"},
	"npm":     {"package.json", ".npmrc"},
	"npx":     {"package.json", ".npmrc"},
	"yarn":    {"package.json", ".yarnrc", ".yarnrc.yml"},
	"pnpm":    {"package.json", ".npmrc"},
	"node":    {"package.json"},
	"pytest":  {"**/conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"},
	"python":  {"**/conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "**/sitecustomize.py", "**/usercustomize.py"},
	"python3": {"**/conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "**/sitecustomize.py", "**/usercustomize.py"},
	"cargo":   {"Cargo.toml", "**/build.rs", ".cargo/config.toml", ".cargo/config"},
	"go":      {"go.mod", "go.work", "**/go.mod"},
	"tsc":     {"tsconfig.json", "**/tsconfig*.json"},
	"eslint":  {".eslintrc*", "eslint.config.*"},
	"jest":    {"jest.config.*", "package.json"},
	"vitest":  {"vitest.config.*", "vite.config.*"},
	"sh":      {},
	"bash":    {},
}

// TouchedInputs returns a warning for each check whose command or inputs
// the change set touches: its program when named by a path, files named in
// its arguments (also as --flag=FILE), the build files its tool reads (see
// toolInputs), and for every check the protect files and the contract file.
// Changes to the code under test are the point and are not reported.
func TouchedInputs(v contract.Verify, changes []workspace.Change, contractPath string) []string {
	warnings, _ := touchedInputs(v, changes, contractPath)
	return warnings
}

// touchedInputs is TouchedInputs and the set of paths it reported.
func touchedInputs(v contract.Verify, changes []workspace.Change, contractPath string) ([]string, map[string]bool) {
	reported := map[string]bool{}
	touched := map[string]bool{}
	for _, p := range changedPaths(changes) {
		touched[path.Clean(p)] = true
	}
	if len(touched) == 0 {
		return nil, reported
	}
	var warnings []string
	if contractPath != "" && touched[path.Clean(contractPath)] {
		warnings = append(warnings, fmt.Sprintf("the change set modifies the task contract %s", contractPath))
		reported[path.Clean(contractPath)] = true
	}
	for _, pat := range v.Protect {
		for _, p := range matching(touched, []string{strings.TrimPrefix(pat, "./"), strings.TrimSuffix(strings.TrimPrefix(pat, "./"), "/") + "/**"}) {
			warnings = append(warnings, fmt.Sprintf("the change set modifies protected file %s", p))
			reported[p] = true
		}
	}
	for i, c := range v.Checks {
		name := checkName(c, i)
		words := c.Run
		if c.Shell != "" {
			words = strings.Fields(c.Shell)
		}
		seen := map[string]bool{}
		report := func(p, why string) {
			if !seen[p] {
				seen[p] = true
				reported[p] = true
				warnings = append(warnings, fmt.Sprintf("check %s: the change set modifies %s, %s", name, p, why))
			}
		}
		for j, w := range words {
			for _, cand := range argPaths(w) {
				if touched[cand] {
					if j == 0 {
						report(cand, "the program it runs")
					} else {
						report(cand, "a file named in its command")
					}
				}
			}
		}
		for _, prog := range programs(words) {
			for _, p := range matching(touched, toolInputs[prog]) {
				report(p, "which configures "+prog)
			}
		}
	}
	return warnings, reported
}

// argPaths returns the workspace-relative paths an argument could name.
func argPaths(w string) []string {
	w = strings.Trim(w, `"'`)
	var out []string
	for _, s := range []string{w, afterEquals(w)} {
		if s == "" || strings.HasPrefix(s, "-") || path.IsAbs(s) {
			continue
		}
		c := path.Clean(s)
		if c != "." && !strings.HasPrefix(c, "../") {
			out = append(out, c)
		}
	}
	return out
}

func afterEquals(w string) string {
	if i := strings.IndexByte(w, '='); i >= 0 {
		return w[i+1:]
	}
	return ""
}

// programs returns the base names of the programs a check runs: the first
// word and, for a shell line, words after && || ; and |.
func programs(words []string) []string {
	var out []string
	next := true
	for _, w := range words {
		if next && !strings.Contains(w, "=") {
			out = append(out, path.Base(w))
			next = false
		}
		if w == "&&" || w == "||" || w == ";" || w == "|" || strings.HasSuffix(w, ";") {
			next = true
		}
	}
	return out
}

// matching returns the touched paths matching any glob, sorted.
func matching(touched map[string]bool, globs []string) []string {
	var out []string
	for p := range touched {
		for _, g := range globs {
			if ok, _ := doublestar.Match(g, p); ok {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
