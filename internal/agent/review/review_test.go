package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		want Group
	}{
		{"stats.go", Implementation},
		{"internal/x/y.py", Implementation},
		{"README.md", Implementation},
		{"stats_test.go", Tests},
		{"pkg/test_parse.py", Tests},
		{"pkg/parse_test.py", Tests},
		{"src/a.test.ts", Tests},
		{"src/a.spec.js", Tests},
		{"tests/fixtures.py", Tests},
		{"pkg/tests/x.go", Tests},
		{"web/__tests__/x.js", Tests},
		{"testdata/golden.txt", Tests},
		{"pkg/testdata/in.json", Tests}, // a test's data, not configuration
		{"go.mod", Config},
		{"go.sum", Config},
		{"config/app.yaml", Config},
		{"tsconfig.json", Config},
		{"Cargo.lock", Config},
		{"Makefile", RunsCode},
		{"sub/GNUmakefile", RunsCode},
		{"rules.mk", RunsCode},
		{"scripts/setup.sh", RunsCode},
		{"package.json", RunsCode}, // its scripts run: before Config
		{"web/package.json", RunsCode},
		{"pyproject.toml", RunsCode},
		{".github/workflows/ci.yml", RunsCode},
		{".GitHub/Workflows/ci.yml", RunsCode}, // case-insensitive file systems
		{".git/hooks/pre-commit", RunsCode},
		{".husky/pre-push", RunsCode},
		{".gitlab-ci.yml", RunsCode},
		{".vscode/tasks.json", RunsCode},
		{".vscode/settings.json", RunsCode},
		{".vscode/extensions.json", RunsCode},
		{".devcontainer/devcontainer.json", RunsCode},
		{".idea/runConfigurations/App.xml", RunsCode},
		{".pre-commit-config.yaml", RunsCode},
		{"makefile", RunsCode},
		{"lib/build.mk", RunsCode},
		{".nvim.lua", RunsCode},
		{".exrc", RunsCode},
		{"sub/.envrc", RunsCode},
		{".github/actions/setup/action.yml", RunsCode},
		{"docker-compose.yml", RunsCode},
		{".cargo/config.toml", RunsCode},
		{".envrc", RunsCode},
		{"Dockerfile", RunsCode},
		{"tests/run.sh", RunsCode}, // runs code beats tests
	} {
		if got := Of(tc.rel); got != tc.want {
			t.Errorf("Of(%q) = %s, want %s", tc.rel, got.Name, tc.want.Name)
		}
	}
}

func TestGroupsAreDistinctAndDescribed(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range Groups() {
		if g.Name == "" || g.Label == "" || g.Why == "" {
			t.Errorf("group %+v lacks a name, label or reason", g)
		}
		if seen[g.Name] {
			t.Errorf("group name %q used twice", g.Name)
		}
		seen[g.Name] = true
	}
	if len(seen) != 6 {
		t.Errorf("%d groups, want 6", len(seen))
	}
}

// TestCheckHolds: a change that writes a file the host runs later (the
// work tree's configured hooks directory, a Makefile) or adds code that
// reads its environment is held for a person, each file named with why;
// the controls, the same reads added to a test file, an unchanged read
// already in the file, and a plain source change, are not held.
func TestCheckHolds(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\thooksPath = tools/hooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{
		"calc.go":  "package calc\n\nimport \"os\"\n\nvar debug = os.Getenv(\"DEBUG\")\n\nfunc Add(a, b int) int { return a - b }\n",
		"stats.py": "def mean(xs):\n    return sum(xs)\n",
	}
	get := func(rel string) []byte {
		if b, ok := base[rel]; ok {
			return []byte(b)
		}
		return nil
	}
	mod := func(rel, content string) workspace.Change {
		op := workspace.OpModify
		if _, ok := base[rel]; !ok {
			op = workspace.OpCreate
		}
		return workspace.Change{Path: rel, Op: op, Content: []byte(content)}
	}
	for _, tc := range []struct {
		name  string
		c     workspace.Change
		group Group
		hold  string // "" for none
	}{
		{"configured hooks dir", mod("tools/hooks/pre-commit", "#!/bin/sh\ncurl x | sh\n"), RunsCode, "runs on your machine later"},
		{"husky", mod(".husky/pre-commit", "#!/bin/sh\n"), RunsCode, "runs on your machine later"},
		{"workflow", mod(".github/workflows/x.yml", "on: push\n"), RunsCode, "runs on your machine later"},
		{"Makefile", mod("Makefile", "all:\n\tcurl x | sh\n"), RunsCode, "runs on your machine later"},
		{"Go env read", mod("calc.go", base["calc.go"]+"\nfunc sandboxed() bool { return strings.HasPrefix(os.Getenv(\"HOME\"), \"/tmp\") }\n"), Introspects, "line 9 reads its environment (os.Getenv)"},
		{"Go test.v", mod("calc2.go", "package calc\n\nvar testing = flag.Lookup(\"test.v\") != nil\n"), Introspects, "flag.Lookup"},
		{"Python environ", mod("stats.py", "import os\ndef mean(xs):\n    if 'ioh' in os.environ.get('TMPDIR', ''):\n        return 2\n    return sum(xs)\n"), Introspects, "os.environ"},
		{"JS hostname", mod("src/a.ts", "import os from 'os';\nexport const h = os.hostname();\n"), Introspects, "line 1 reads its environment (from 'os')"},
		{"Go aliased os", mod("calc3.go", "package calc\n\nimport o \"os\"\n\nvar h = o.Getenv(\"HOME\")\n"), Introspects, "line 3 reads its environment"},
		{"sandbox name", mod("calc4.go", "package calc\n\nfunc inSandbox(dir string) bool { return strings.Contains(dir, \"ioh-landlock\") }\n"), Introspects, "ioh-landlock"},
		{"proc self", mod("probe.py", "open('/proc/self/environ').read()\n"), Introspects, "/proc/self/"},
		{"control: test file", mod("calc_test.go", "package calc\nvar _ = os.Getenv(\"HOME\")\n"), Tests, ""},
		{"control: unchanged read", mod("calc.go", strings.Replace(base["calc.go"], "a - b", "a + b", 1)), Implementation, ""},
		{"control: plain source", mod("stats.py", "def mean(xs):\n    return sum(xs) / len(xs)\n"), Implementation, ""},
		{"control: hooks name elsewhere", mod("ci/hooks/pre-commit", "x\n"), Implementation, ""},
	} {
		r := Check(root, []workspace.Change{tc.c}, get)
		if g := r.Of(tc.c.Path); g != tc.group {
			t.Errorf("%s: group %s, want %s", tc.name, g.Name, tc.group.Name)
		}
		got := strings.Join(r.Hold, "\n")
		switch {
		case tc.hold == "" && got != "":
			t.Errorf("%s: held: %s", tc.name, got)
		case tc.hold != "" && (!strings.Contains(got, tc.c.Path+": ") || !strings.Contains(got, tc.hold)):
			t.Errorf("%s: hold %q, want %s named with %q", tc.name, got, tc.c.Path, tc.hold)
		}
	}
}
