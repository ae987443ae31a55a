package agent

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
)

// The orientation of the first message: a bounded map of the workspace,
// the languages and check commands found, and git status.

// maxOverviewBytes bounds the workspace map (about 1.5k tokens).
const maxOverviewBytes = 6 << 10

// notableFiles are the files the map names wherever they stand in its
// first two levels: build files, manifests and the readme.
var notableFiles = map[string]bool{
	"README.md": true, "README": true, "go.mod": true, "go.work": true, "Makefile": true, "package.json": true,
	"pyproject.toml": true, "setup.py": true, "Cargo.toml": true, "pom.xml": true, "build.gradle": true,
	"CMakeLists.txt": true, "Dockerfile": true, "tsconfig.json": true, "Gemfile": true, "mix.exs": true,
	"AGENTS.md": true, "CLAUDE.md": true, "GEMINI.md": true, "CONTRIBUTING.md": true,
}

// languageOf names a file's language by its extension ("" for none).
var languageOf = map[string]string{
	".go": "Go", ".py": "Python", ".ts": "TypeScript", ".tsx": "TypeScript", ".js": "JavaScript", ".jsx": "JavaScript",
	".mjs": "JavaScript", ".rs": "Rust", ".java": "Java", ".kt": "Kotlin", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++",
	".hpp": "C++", ".cs": "C#", ".rb": "Ruby", ".php": "PHP", ".swift": "Swift", ".scala": "Scala", ".lua": "Lua",
	".sh": "Shell", ".ex": "Elixir", ".exs": "Elixir", ".zig": "Zig", ".hs": "Haskell", ".ml": "OCaml",
}

// orientation is the first message's map of the workspace; "" when the
// workspace cannot be listed. It is built once per agent: the first
// message is rebuilt when the red phase's summary comes (redphase.go).
func (a *agentRun) orientation(ctx context.Context) string {
	if a.orient == nil {
		s := a.buildOrientation(ctx)
		a.orient = &s
	}
	return *a.orient
}

func (a *agentRun) buildOrientation(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	files, err := a.h.opts.Root.Find(ctx, "**")
	if err != nil || len(files) == 0 {
		return ""
	}
	sort.Strings(files)
	var b strings.Builder
	fmt.Fprintf(&b, "# Workspace\n%d files. Top level (files per directory):\n", len(files))
	b.WriteString(overview(files))
	if langs := languages(files); langs != "" {
		fmt.Fprintf(&b, "Languages: %s\n", langs)
	}
	if cmds := checkCommands(files); len(cmds) > 0 {
		fmt.Fprintf(&b, "Check commands found: %s\n", strings.Join(cmds, "; "))
	}
	if st := a.gitStatus(ctx); st != "" {
		fmt.Fprintf(&b, "\n`git status --short` at the start:\n```\n%s\n```\n", st)
	}
	return b.String()
}

// overview lists the top-level directories with their file counts and
// notable files (the first two levels), then the top-level files,
// within maxOverviewBytes.
func overview(files []string) string {
	type dir struct {
		n       int
		notable []string
	}
	dirs := map[string]*dir{}
	var order, top []string
	for _, f := range files {
		first, rest, nested := strings.Cut(f, "/")
		if !nested {
			top = append(top, f)
			continue
		}
		d := dirs[first]
		if d == nil {
			d = &dir{}
			dirs[first] = d
			order = append(order, first)
		}
		d.n++
		if notableFiles[path.Base(rest)] && strings.Count(rest, "/") <= 1 {
			d.notable = append(d.notable, rest)
		}
	}
	var b strings.Builder
	left := 0
	for i, name := range order {
		d := dirs[name]
		line := fmt.Sprintf("- %s/ (%d)", name, d.n)
		if len(d.notable) > 0 {
			line += ": " + strings.Join(d.notable[:min(len(d.notable), 4)], ", ")
		}
		if b.Len()+len(line) > maxOverviewBytes*2/3 {
			left = len(order) - i
			break
		}
		b.WriteString(line + "\n")
	}
	if left > 0 {
		fmt.Fprintf(&b, "- … %d more directories (list_dir to see them)\n", left)
	}
	for i, f := range top {
		if b.Len()+len(f) > maxOverviewBytes {
			fmt.Fprintf(&b, "- … %d more top-level files\n", len(top)-i)
			break
		}
		b.WriteString("- " + f + "\n")
	}
	return b.String()
}

// languages names the languages of the workspace's files, most files
// first, with their counts.
func languages(files []string) string {
	count := map[string]int{}
	for _, f := range files {
		if l := languageOf[strings.ToLower(path.Ext(f))]; l != "" {
			count[l]++
		}
	}
	names := make([]string, 0, len(count))
	for l := range count {
		names = append(names, l)
	}
	sort.Slice(names, func(i, j int) bool {
		if count[names[i]] != count[names[j]] {
			return count[names[i]] > count[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, l := range names[:min(len(names), 6)] {
		parts = append(parts, fmt.Sprintf("%s (%d files)", l, count[l]))
	}
	return strings.Join(parts, ", ")
}

// checkCommands are the usual test commands of the build files at the
// workspace's root, each with the file that suggests it.
func checkCommands(files []string) []string {
	has := map[string]bool{}
	for _, f := range files {
		if !strings.Contains(f, "/") {
			has[f] = true
		}
	}
	var out []string
	for _, c := range []struct{ file, cmd string }{
		{"go.mod", "go build ./... && go test ./..."},
		{"Makefile", "make test"},
		{"package.json", "npm test"},
		{"pyproject.toml", "pytest"},
		{"setup.py", "pytest"},
		{"Cargo.toml", "cargo test"},
		{"pom.xml", "mvn test"},
		{"build.gradle", "gradle test"},
	} {
		if has[c.file] {
			out = append(out, fmt.Sprintf("%s (%s)", c.cmd, c.file))
		}
	}
	return out
}

// gitStatus is `git status --short` of the workspace, run in the
// sandbox like any command (a repository's configuration can make git
// run programs); "" when the workspace is no git work tree or it fails.
func (a *agentRun) gitStatus(ctx context.Context) string {
	root := a.h.opts.Root.Dir()
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil || a.h.opts.Sandbox == nil {
		return ""
	}
	res, err := a.h.opts.Sandbox.Exec(ctx, &contain.Request{
		Argv: []string{"git", "--no-optional-locks", "-c", "core.fsmonitor=false", "status", "--short"},
		Root: root, Timeout: 10 * time.Second, OutputLimit: 8 << 10,
	})
	if err != nil || res.ExitCode != 0 {
		return ""
	}
	out := strings.TrimRight(string(res.Output), "\n")
	if out == "" {
		return "(clean)"
	}
	lines := strings.Split(out, "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("… %d more lines", len(lines)-40))
	}
	return strings.Join(lines, "\n")
}
