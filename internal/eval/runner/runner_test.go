package runner

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/suite"
)

const example = "../../../examples/eval/suite.yaml"

// treeSum is a digest of every file under dir (names and contents).
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %d %x\n", p, len(b), sha256.Sum256(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestRunExampleSuite runs the example suite in process through the real
// harness, sandbox and replay provider: the fixing variant verifies
// every task, the giving-up one none (with its failed edits counted), the
// tasks' own trees are untouched, and a second run runs nothing.
func TestRunExampleSuite(t *testing.T) {
	s, err := suite.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, "../../../examples/eval/tasks")
	out := t.TempDir()
	sum, err := Run(context.Background(), Options{Suite: s, Parallel: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Planned != 6 || sum.Ran != 6 || sum.Done != 0 {
		t.Fatalf("summary %+v", sum)
	}
	cells, torn, err := result.Read(sum.Results)
	if err != nil || torn >= 0 || len(cells) != 6 {
		t.Fatalf("results: %d cells, torn %d, %v", len(cells), torn, err)
	}
	for _, c := range cells {
		switch c.Variant {
		case "fix":
			if !c.Verified || c.Outcome != "awaiting_approval" || c.Steps != 3 || c.VerifyRounds != 1 || c.FailedEdits != 0 || c.Tokens.Input != 5500 || c.Tokens.Total != 5650 {
				t.Errorf("fix cell %+v", c)
			}
		case "giveup":
			if c.Verified || c.FailedEdits != 1 || c.Outcome == "error" || c.VerifyRounds < 1 {
				t.Errorf("giveup cell %+v", c)
			}
		}
		if c.Trace == "" {
			t.Errorf("cell %s has no trace", c.Key())
		} else if _, err := os.Stat(filepath.Join(out, c.Trace)); err != nil {
			t.Errorf("cell %s trace: %v", c.Key(), err)
		}
	}
	if after := treeSum(t, "../../../examples/eval/tasks"); after != before {
		t.Fatal("the suite's task trees changed")
	}
	if left, _ := os.ReadDir(filepath.Join(out, "work")); len(left) != 0 {
		t.Errorf("cell workspaces left behind: %d", len(left))
	}
	again, err := Run(context.Background(), Options{Suite: s, Parallel: 2, Out: out})
	if err != nil || again.Ran != 0 || again.Done != 6 {
		t.Fatalf("second run %+v, %v", again, err)
	}
}

// TestResumeRunsOnlyUnfinishedCells: a results file whose last line was
// torn by a crash resumes with exactly the cells it lacks; the torn line
// is cut, never read.
func TestResumeRunsOnlyUnfinishedCells(t *testing.T) {
	s, err := suite.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res := filepath.Join(out, result.FileName)
	// Two finished cells (made up: a rerun would overwrite their figures)
	// and a torn third.
	lines := `{"task":"mean","variant":"fix","repeat":1,"outcome":"awaiting_approval","verified":true,"steps":99}
{"task":"clamp","variant":"fix","repeat":1,"outcome":"awaiting_approval","verified":true,"steps":98}
{"task":"last","varia`
	os.WriteFile(res, []byte(lines), 0o644)
	sum, err := Run(context.Background(), Options{Suite: s, Variants: []string{"fix"}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 2 || sum.Ran != 1 {
		t.Fatalf("summary %+v", sum)
	}
	cells, torn, err := result.Read(res)
	if err != nil || torn >= 0 || len(cells) != 3 {
		t.Fatalf("%d cells, torn %d, %v", len(cells), torn, err)
	}
	if cells[0].Steps != 99 || cells[1].Steps != 98 || cells[2].Task != "last" || !cells[2].Verified {
		t.Fatalf("cells %+v", cells)
	}
}

// TestInterruptedCellIsNotRecorded: a cancelled eval writes no cell for
// the runs it cut, and says how to continue.
func TestInterruptedCellIsNotRecorded(t *testing.T) {
	s, err := suite.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	sum, err := Run(ctx, Options{Suite: s, Out: out})
	if err == nil || !strings.Contains(err.Error(), "run the same command again") || sum.Ran != 0 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	cells, _, _ := result.Read(sum.Results)
	if len(cells) != 0 {
		t.Fatalf("cancelled cells recorded: %+v", cells)
	}
}

func TestParseShard(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "JOB_COMPLETION_INDEX" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		flag, env string
		want      Shard
		err       string
	}{
		{"", "", All, ""},
		{"1/4", "", Shard{1, 4}, ""},
		{"4", "3", Shard{3, 4}, ""},
		{"4", "", All, "JOB_COMPLETION_INDEX is not set"},
		{"4/4", "", All, "want 0 to 3"},
		{"0/0", "", All, "N ≥ 1"},
		{"1/4", "2", All, "JOB_COMPLETION_INDEX=2"},
		{"x", "", All, "bad --shard"},
	} {
		got, err := ParseShard(c.flag, env(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q env %q: error %v, want %q", c.flag, c.env, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q env %q: %v %v, want %v", c.flag, c.env, got, err, c.want)
		}
	}
}

// TestShardsPartitionThePlan: the shards of a plan are disjoint and
// cover it.
func TestShardsPartitionThePlan(t *testing.T) {
	s, err := suite.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	plan := Plan(s, s.Variants, 3)
	seen := map[result.Key]int{}
	for i := range 4 {
		for j, k := range plan {
			if (Shard{i, 4}).Has(j) {
				seen[k]++
			}
		}
	}
	if len(plan) != 18 || len(seen) != 18 {
		t.Fatalf("plan %d, covered %d", len(plan), len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s in %d shards", k, n)
		}
	}
}
