package generate

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/runner"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/suite"
)

const calc = "testdata/calc"

// TestSites: each kind of mutation is found in covered code only, and a
// loop's post statement is never dropped.
func TestSites(t *testing.T) {
	src := []byte(`package p

func f(xs []int, a, b int) int {
	n := 0
	for i := 0; i < len(xs); i++ {
		n += xs[i]
	}
	g(a, b)
	return n
}
`)
	all := func(int, int) bool { return true }
	ss, err := sites("p.go", src, all)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range ss {
		got = append(got, string(s.Kind)+" "+s.Old+"→"+s.New)
		if s.Kind == Drop && s.Old == "i++" {
			t.Errorf("the loop's post statement is a drop site")
		}
	}
	want := "off-by-one 0→1|off-by-one 0→1|flip <→>=|drop n += xs[i]→|drop g(a, b)→|swap a, b→b, a"
	if strings.Join(got, "|") != want {
		t.Errorf("sites\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	mut := ss[2].Apply(src)
	if !bytes.Contains(mut, []byte("i >= len(xs)")) {
		t.Errorf("flip applied:\n%s", mut)
	}
	none, _ := sites("p.go", src, func(line, _ int) bool { return line == 8 })
	if len(none) != 2 || none[0].Kind != Drop || none[1].Kind != Swap {
		t.Errorf("sites on line 8 only: %+v", none)
	}
}

func TestParseProfile(t *testing.T) {
	p := parseProfile([]byte("mode: set\nexample.com/calc/calc.go:8.24,9.11 1 1\nexample.com/calc/calc.go:12.2,12.10 1 0\n"))
	c := p["example.com/calc/calc.go"]
	if len(c) != 1 || !c.has(8, 30) || !c.has(9, 3) || c.has(9, 11) || c.has(12, 5) {
		t.Fatalf("covers %+v", c)
	}
}

func treeText(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		b.WriteString("== " + rel + "\n" + string(data))
		return nil
	})
	return b.String()
}

// TestGenerateAndRunOffline makes a suite from testdata/calc, checks each
// task (its test fails on the mutated tree, its contract loads, its goal
// quotes the failure), that the repository is untouched and that the same
// seed gives the same suite; then runs it through the real harness with
// the replay provider: the restoring variant verifies every task, the
// one that gives up none.
func TestGenerateAndRunOffline(t *testing.T) {
	before := treeText(t, calc)
	out := filepath.Join(t.TempDir(), "suite")
	o := Options{Repo: calc, Count: 3, Seed: 7, Out: out, Cassettes: true}
	tasks, err := Generate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 {
		t.Fatalf("%d tasks", len(tasks))
	}
	if treeText(t, calc) != before {
		t.Fatal("generation changed the repository")
	}
	for _, task := range tasks {
		dir := filepath.Join(out, "tasks", task.ID)
		c, err := contract.Load(filepath.Join(dir, "task.ioh.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.Goal, "--- FAIL: "+task.Tests[0]) || !c.Verify.RedGreen {
			t.Errorf("%s: goal %q", task.ID, c.Goal)
		}
		cmd := exec.Command("go", "test", "-count=1", "-vet=off", "-run", runPattern(task.Tests), ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--- FAIL: "+task.Tests[0]) {
			t.Errorf("%s: the test does not fail on the mutated tree: %v\n%s", task.ID, err, out)
		}
	}
	again := filepath.Join(t.TempDir(), "suite")
	o.Out = again
	if _, err := Generate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if treeText(t, again) != treeText(t, out) {
		t.Error("the same seed made a different suite")
	}

	s, err := suite.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	res := t.TempDir()
	if _, err := runner.Run(context.Background(), runner.Options{Suite: s, Parallel: 2, Out: res}); err != nil {
		t.Fatal(err)
	}
	cells, _, err := result.Read(filepath.Join(res, result.FileName))
	if err != nil || len(cells) != 6 {
		t.Fatalf("%d cells, %v", len(cells), err)
	}
	for _, c := range cells {
		if c.Verified != (c.Variant == "restore") {
			t.Errorf("cell %s: verified %v (%s %s)", c.Key(), c.Verified, c.Outcome, c.Error)
		}
	}
}
