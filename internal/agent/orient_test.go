package agent

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The first message maps the workspace (directories with file counts,
// notable files), names its languages and check commands and shows git
// status; the system prompt has the workflow and no tool list.
func TestFirstMessageOrients(t *testing.T) {
	f := newFixture(t, map[string]string{
		"go.mod":          "module example.com/m\n",
		"Makefile":        "test:\n\tgo test ./...\n",
		"cmd/m/main.go":   "package main\n",
		"stats/stats.go":  "package stats\n",
		"stats/README.md": "stats\n",
		"web/app.ts":      "export {}\n",
	}, map[string][]turn{"": {say(10, "finish", args{"summary": "done"})}})
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = f.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "go.mod")
	f.run(t, goal("fix stats"))
	req := f.prov.requests()[0]
	first := req.Messages[0].Text
	for _, want := range []string{"# Workspace\n", "- stats/ (2): README.md", "- cmd/ (1)", "- go.mod",
		"Languages: Go (2 files), TypeScript (1 files)", "go build ./... && go test ./... (go.mod)", "make test (Makefile)",
		"`git status --short` at the start:", "A  go.mod", "?? stats/"} {
		if !strings.Contains(first, want) {
			t.Errorf("first message lacks %q:\n%s", want, first)
		}
	}
	if !strings.Contains(req.System, "# Workflow\n1. Reproduce") || strings.Contains(req.System, "# Tools") {
		t.Errorf("system prompt without the workflow or with a tool list:\n%s", req.System)
	}
}

// The map stays within its bound however wide the tree, and says how
// much it left out.
func TestOverviewIsBounded(t *testing.T) {
	var files []string
	for i := 0; i < 2000; i++ {
		files = append(files, fmt.Sprintf("dir%04d/file.go", i), fmt.Sprintf("top%04d.txt", i))
	}
	sort.Strings(files)
	got := overview(files)
	if len(got) > maxOverviewBytes+200 {
		t.Errorf("overview %d bytes, want ≤ %d", len(got), maxOverviewBytes)
	}
	if !strings.Contains(got, "more directories (list_dir to see them)") || !strings.Contains(got, "more top-level files") {
		t.Errorf("overview does not say what it left out:\n%s", got[len(got)-300:])
	}
}
