package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestProjectTestCommand(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{nil, nil},
		{[]string{"README.md"}, nil},
		{[]string{"go.mod"}, []string{"go", "test", "./..."}},
		{[]string{"Cargo.toml"}, []string{"cargo", "test", "--offline"}},
		{[]string{"package.json"}, []string{"npm", "test", "--silent"}},
		{[]string{"pytest.ini"}, []string{"python3", "-m", "pytest", "-q"}},
		{[]string{"setup.py"}, []string{"python3", "-m", "pytest", "-q"}},
		// A Go module with a JavaScript front end is tested as Go.
		{[]string{"package.json", "go.mod"}, []string{"go", "test", "./..."}},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := ProjectTestCommand(dir); !slices.Equal(got, tc.want) {
			t.Errorf("files %q: got %q, want %q", tc.files, got, tc.want)
		}
	}
}

// ProjectChecks is a verify.checks section the parser takes as written:
// one check "tests" running the project's test command, none for an
// unknown project.
func TestProjectChecksParse(t *testing.T) {
	parse := func(dir string) *Contract {
		t.Helper()
		doc := map[string]any{"version": 1, "goal": "g"}
		if checks := ProjectChecks(dir); checks != nil {
			doc["verify"] = map[string]any{"checks": checks}
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(raw, "ask")
		if err != nil {
			t.Fatalf("parse %s: %v", raw, err)
		}
		return c
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := parse(dir)
	if len(c.Verify.Checks) != 1 || c.Verify.Checks[0].Name != "tests" || !slices.Equal(c.Verify.Checks[0].Run, []string{"go", "test", "./..."}) {
		t.Errorf("go module checks = %+v", c.Verify.Checks)
	}
	if c := parse(t.TempDir()); len(c.Verify.Checks) != 0 {
		t.Errorf("unknown project checks = %+v, want none", c.Verify.Checks)
	}
}
