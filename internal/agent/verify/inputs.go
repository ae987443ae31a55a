package verify

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// toolInputs are files that change what a tool does when it runs, keyed by
// the program's base name: a change set that edits them can weaken a check
// without touching the code under test.
var toolInputs = &lazyValue[map[string][]string]{build: func() map[string][]string {
	return map[string][]string{
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
}}

// TouchedInputs returns a line for each check whose command or inputs the
// change set touches: its program when named by a path, the script an
// interpreter runs, files passed as --flag=FILE, other files named in its
// arguments, the build files its tool reads (see toolInputs), and for
// every check the protect files and the contract file. Changes to the code
// under test are the point and are not reported.
func TouchedInputs(v contract.Verify, changes []workspace.Change, contractPath string) []string {
	holds, _, data := touchedInputs(v, changes, contractPath)
	return append(holds, data...)
}

// interpreters run the script named by their first operand.
var interpreters = &lazyValue[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"sh": true, "bash": true, "dash": true, "zsh": true, "python": true, "python3": true,
		"node": true, "deno": true, "bun": true, "ruby": true, "perl": true, "php": true,
	}
}}

// touchedInputs is TouchedInputs split in two: holds are changes to what a
// check runs or how (its program or script, option files, the tool's
// build files, the protect files, the contract), with the set of their
// paths; data are other files a check names in its arguments, which it
// only reads (the code under test, typically): worth a warning, not a
// hold.
func touchedInputs(v contract.Verify, changes []workspace.Change, contractPath string) (holds []string, reported map[string]bool, data []string) {
	reported = map[string]bool{}
	touched := map[string]bool{}
	for _, p := range changedPaths(changes) {
		touched[path.Clean(p)] = true
	}
	if len(touched) == 0 {
		return nil, reported, nil
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
		prog, scriptNext := "", false
		segment := true      // the next word starts a command
		optionValue := false // the word is the value of a program or configuration option
		for _, w := range words {
			start := segment && !strings.Contains(w, "=")
			if start {
				prog, scriptNext, segment = path.Base(w), interpreters.get()[path.Base(w)], false
			}
			positional := !strings.HasPrefix(w, "-")
			valueOf := optionValue
			optionValue = !start && takesValue(prog, w)
			for _, cand := range argPaths(w) {
				if !touched[cand] {
					continue
				}
				switch {
				case start:
					report(cand, "the program it runs")
				case valueOf:
					report(cand, "a file passed to it as an option")
				case positional && scriptNext:
					report(cand, "the script "+prog+" runs")
				case !positional:
					report(cand, "a file passed to it as an option")
				case !seen[cand]:
					seen[cand] = true
					data = append(data, fmt.Sprintf("check %s: the change set modifies %s, a file named in its command", name, cand))
				}
			}
			if !start && positional && scriptNext {
				scriptNext = false
			}
			if w == "&&" || w == "||" || w == ";" || w == "|" || strings.HasSuffix(w, ";") {
				segment = true
			}
		}
		for _, prog := range programs(words) {
			for _, p := range matching(touched, toolInputs.get()[prog]) {
				report(p, "which configures "+prog)
			}
		}
	}
	return warnings, reported, data
}

// valueOptions take a program, a module to preload or a configuration
// file as the next word (`go test -exec ./wrap.sh`, `node --require
// ./hook.js`, `pytest -c ci.ini`, `make -f other.mk`): a changed file there
// changes what the check runs or how, like `--option=FILE`. Keyed by the
// program's base name; "" holds the long options of any program.
var valueOptions = &lazyValue[map[string]map[string]bool]{build: func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"": {"--config": true, "--config-file": true, "--rcfile": true, "--require": true, "--import": true,
			"--loader": true, "--experimental-loader": true, "--env-file": true, "--manifest-path": true,
			"--setupFiles": true, "--setup-files": true, "--rootdir": true, "--confcutdir": true, "--makefile": true},
		"go":      {"-exec": true, "-toolexec": true, "-overlay": true, "-modfile": true, "--exec": true, "--toolexec": true, "--overlay": true, "--modfile": true},
		"make":    {"-f": true, "--file": true},
		"node":    {"-r": true},
		"pytest":  {"-c": true},
		"python":  {"-c": true},
		"python3": {"-c": true},
		"jest":    {"-c": true},
	}
}}

func takesValue(prog, opt string) bool {
	opts := valueOptions.get()
	return opts[""][opt] || opts[prog][opt]
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
	out := commandWords(words)
	for i, w := range out {
		out[i] = path.Base(w)
	}
	return out
}

// commandWords returns the words that name the programs a check runs, as
// written (see programs).
func commandWords(words []string) []string {
	var out []string
	next := true
	for _, w := range words {
		if next && !strings.Contains(w, "=") {
			out = append(out, w)
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

// shadowedPrograms returns a reason for each program a check names
// without a slash (looked up in PATH inside the sandbox, which keeps the
// caller's PATH) that resolves to a file the change set adds or edits in
// a PATH directory inside the workspace: a relative or empty entry (the
// check runs in the workspace root) or an absolute one under root, before
// any directory outside it that holds the program. Such a change replaces
// the program the check runs (its own `go` printing a passing stream)
// though the check's words name no file of the workspace. pathEnv is the
// PATH the sandbox passes on; touched holds the workspace-relative paths
// the change set leaves executable (the lookup passes over a file that is
// not). The result maps each such path to its reason.
func shadowedPrograms(v contract.Verify, touched map[string]bool, root, pathEnv string) map[string]string {
	out := map[string]string{}
	if len(touched) == 0 || root == "" {
		return out
	}
	for i, c := range v.Checks {
		words := c.Run
		if c.Shell != "" {
			words = strings.Fields(c.Shell)
		}
		for _, prog := range commandWords(words) {
			if prog == "" || strings.ContainsAny(prog, `/\`) {
				continue
			}
			if p, ok := lookPathIn(prog, root, pathEnv, touched); ok {
				out[p] = fmt.Sprintf("check %s: the change set modifies %s, which runs as %s (a PATH directory inside the workspace)", checkName(c, i), p, prog)
			}
		}
	}
	// A program a check's program runs by name (a test script calling
	// grep) resolves there too: any file changed directly in such a
	// directory is a program something may run.
	for _, d := range filepath.SplitList(pathEnv) {
		rel, ok := workspaceDir(root, d)
		if !ok {
			continue
		}
		for p := range touched {
			if _, seen := out[p]; !seen && path.Dir(p) == rel {
				out[p] = fmt.Sprintf("the change set modifies %s in %s, a PATH directory inside the workspace: any command run by the name %s runs it", p, rel, path.Base(p))
			}
		}
	}
	return out
}

// workspaceDir returns the workspace-relative form of the PATH entry d
// when it lies inside root ("" and relative entries are relative to the
// working directory, the workspace root).
func workspaceDir(root, d string) (string, bool) {
	abs := d
	if !filepath.IsAbs(d) {
		abs = filepath.Join(root, d)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return path.Clean(filepath.ToSlash(rel)), true
}

// lookPathIn follows the sandbox's PATH lookup of prog: the first
// directory holding it decides. It returns the workspace-relative path
// when that is a file the change set touches.
func lookPathIn(prog, root, pathEnv string, touched map[string]bool) (string, bool) {
	for _, d := range filepath.SplitList(pathEnv) {
		abs := d
		if !filepath.IsAbs(d) {
			abs = filepath.Join(root, d) // "" and "." are the working directory
		}
		if rel, inside := workspaceDir(root, d); inside {
			if cand := path.Join(rel, prog); touched[cand] {
				return cand, true
			}
		}
		if fi, err := os.Stat(filepath.Join(abs, prog)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return "", false // an unchanged program found first
		}
	}
	return "", false
}

// sandboxPath is the PATH a check's program is looked up in.
func sandboxPath() string { return os.Getenv("PATH") }
