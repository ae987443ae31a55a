package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadExample(t *testing.T) {
	s, err := Load("../../../examples/eval/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tasks) != 3 || s.Tasks[0].ID != "mean" || s.Tasks[2].ID != "last" {
		t.Fatalf("tasks %+v", s.Tasks)
	}
	if !s.Tasks[0].Inside || s.Tasks[0].Contract != "task.ioh.yaml" {
		t.Errorf("contract of mean: %q inside=%v", s.Tasks[0].Contract, s.Tasks[0].Inside)
	}
	if len(s.Variants) != 2 || s.Variants[1].Budget.Steps != 5 {
		t.Fatalf("variants %+v", s.Variants)
	}
	got := s.Variants[0].CassetteFor(s.Tasks[1])
	if !strings.HasSuffix(got, filepath.Join("cassettes", "fix", "clamp.json")) || !filepath.IsAbs(got) {
		t.Errorf("cassette %q", got)
	}
}

// TestLoadErrorsNameFileAndLine: each bad suite is refused with its
// file, line and what to do.
func TestLoadErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "ws"), 0o755)
	os.WriteFile(filepath.Join(dir, "ws", "t.ioh.yaml"), []byte("goal: g\nverify: [{run: [echo]}]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ws", "bad.yaml"), []byte("budget: {steps: 3}\n"), 0o644)
	cases := []struct{ name, text, want string }{
		{"missing workspace", "tasks:\n  - workspace: ws\n  - workspace: nope\n", ":3:16: workspace " + filepath.Join(dir, "nope") + " is not a directory"},
		{"unknown key", "tasks:\n  - workspace: ws\n    cassete: x\n", ":3:5: unknown field \"cassete\""},
		{"bad yaml", "tasks:\n  - workspace: [ws\n", ":2:"},
		{"no tasks", "name: x\n", "lists no tasks"},
		{"duplicate id", "tasks:\n  - workspace: ws\n  - workspace: ws\n", ":3:14: task id \"ws\" is used twice"},
		{"bad wall", "tasks:\n  - workspace: ws\nvariants:\n  - name: a\n    budget: {wall: soon}\n", ":5:20: invalid duration \"soon\""},
		{"bad variant name", "tasks:\n  - workspace: ws\nvariants:\n  - name: a/b\n", ":4:9: variant name \"a/b\""},
		{"git without commit", "tasks:\n  - git: {url: /r}\n    contract: t.yaml\n", ":2:10: git needs both"},
		{"bad contract", "tasks:\n  - workspace: ws\n    contract: bad.yaml\n", ":3:15: " + filepath.Join(dir, "ws", "bad.yaml") + ":1:1: goal: required field missing"},
		{"missing cassette", "tasks:\n  - workspace: ws\n    cassette: none.json\n", ":3:15: cassette " + filepath.Join(dir, "none.json")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "suite.yaml")
			os.WriteFile(p, []byte(c.text), 0o644)
			_, err := Load(p)
			if err == nil || !strings.HasPrefix(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %s…%s", err, p, c.want)
			}
		})
	}
}

func TestLoadDirectory(t *testing.T) {
	s, err := Load("../../../examples/eval/tasks")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, t := range s.Tasks {
		ids = append(ids, t.ID)
	}
	if strings.Join(ids, ",") != "clamp,last,mean" || len(s.Variants) != 1 {
		t.Fatalf("tasks %v variants %+v", ids, s.Variants)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "nothing to run") {
		t.Fatalf("empty dir: %v", err)
	}
}

func TestBudgetApply(t *testing.T) {
	s, err := Load("../../../examples/eval/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := loadContract(t, filepath.Join(s.Tasks[0].Dir, s.Tasks[0].Contract))
	Budget{Steps: 3, Wall: time.Minute}.Apply(c)
	if c.Budget.Steps != 3 || c.Budget.Wall != time.Minute || c.Omitted.Wall {
		t.Fatalf("budget %+v omitted %+v", c.Budget, c.Omitted)
	}
}
