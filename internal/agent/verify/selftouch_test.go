package verify

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

const statsGo = `package stats

import "errors"

var ErrEmpty = errors.New("empty")

var table = []int{1, 2}

func Mean(xs []int) float64 { return 0 }
`

func TestTouchedChecks(t *testing.T) {
	root := writeTree(t, map[string]string{
		"stats.go":       statsGo,
		"stats_test.go":  "package stats\n",
		"pyproject.toml": "[project]\nname = \"s\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
		"setup.cfg":      "[metadata]\nname = s\n",
		"lib/util.py":    "import os\n\nLIMIT = 3\n\ndef f():\n    return os.getpid()\n",
		"src/lib.rs":     "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(1, 2), 3); }\n}\n",
	})
	v := contract.Verify{Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test", "./..."}}}}
	mod := func(p, content string) workspace.Change {
		return workspace.Change{Path: p, Op: workspace.OpModify, Content: []byte(content)}
	}
	tests := []struct {
		name   string
		change workspace.Change
		want   []string
	}{
		{"the code under test", mod("stats.go", strings.Replace(statsGo, "return 0", "return 2", 1)), nil},
		{"a new sentinel error", mod("stats.go", statsGo+"var ErrBig = errors.New(\"big\")\n"), nil},
		{"an edited test", mod("stats_test.go", "package stats\n\n// more\n"), []string{"edits stats_test.go, a test file"}},
		{"a deleted test file", workspace.Change{Path: "stats_test.go", Op: workspace.OpDelete}, []string{"deletes stats_test.go, a test file"}},
		{"a renamed test file", workspace.Change{Path: "stats_test.go.bak", From: "stats_test.go", Op: workspace.OpCreate, Content: []byte("package stats\n")},
			[]string{"renames away stats_test.go, a test file"}},
		{"a TestMain", workspace.Change{Path: "main_test.go", Op: workspace.OpCreate, Content: []byte("package stats\n\nimport (\"os\"; \"testing\")\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n")},
			[]string{"adds main_test.go, a test file", "adds or changes TestMain in main_test.go: it decides whether and which tests run"}},
		{"an init function", workspace.Change{Path: "zz.go", Op: workspace.OpCreate, Content: []byte("package stats\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n")},
			[]string{"adds or changes an init function in zz.go: code that runs when the package loads"}},
		{"a variable initialised by a call", mod("stats.go", statsGo+"var _ = setup()\n\nfunc setup() int { return 1 }\n"),
			[]string{"adds or changes package-level variable _ in stats.go, initialised by a call that runs when the package loads"}},
		{"an unparsable Go file", mod("stats.go", "package stats\nfunc {"), []string{"stats.go does not parse, so package-init code in it cannot be ruled out"}},
		{"go.mod", mod("go.mod", "module x\n"), []string{"check unit: the change set modifies go.mod, which configures go"}},
		{"the test runner in node_modules", mod("node_modules/jest/build/index.js", "process.exit(0)\n"),
			[]string{"edits node_modules/jest/build/index.js, which changes what the checks run or how"}},
		{"pytest in a virtualenv", mod(".venv/lib/python3.11/site-packages/_pytest/main.py", "import os\n"),
			[]string{"edits .venv/lib/python3.11/site-packages/_pytest/main.py, which changes what the checks run or how"}},
		{"a conftest", workspace.Change{Path: "tests/conftest.py", Op: workspace.OpCreate, Content: []byte("def pytest_collection_modifyitems(items):\n    items.clear()\n")},
			[]string{"adds tests/conftest.py, a test file"}},
		{"pyproject test settings", mod("pyproject.toml", "[project]\nname = \"s\"\n\n[tool.pytest.ini_options]\naddopts = \"-q --deselect test_mean.py\"\n"),
			[]string{"changes the test settings ([tool.pytest.ini_options]) of pyproject.toml"}},
		{"pyproject metadata only", mod("pyproject.toml", "[project]\nname = \"stats\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"), nil},
		{"setup.cfg gains a pytest section", mod("setup.cfg", "[metadata]\nname = s\n[tool:pytest]\naddopts = -k 'not mean'\n"),
			[]string{"changes the test settings ([tool:pytest]) of setup.cfg"}},
		{"rust code outside its tests", mod("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(1, 2), 3); }\n}\n"), nil},
		{"rust inline test ignored", mod("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    #[ignore]\n    fn adds() { assert_eq!(super::add(1, 2), 3); }\n}\n"),
			[]string{"edits the tests inside src/lib.rs (#[cfg(test)] or #[test])"}},
		{"python code that runs on import", mod("lib/util.py", "import os\n\nLIMIT = 3\nos._exit(0)\n\ndef f():\n    return os.getpid()\n"),
			[]string{"adds code that runs when lib/util.py is imported: os._exit(0)",
				"adds code to lib/util.py that could end the test process or write its results itself, which per-test evidence cannot rule out: uses _exit"}},
		{"python function body change", mod("lib/util.py", "import os\n\nLIMIT = 4\n\ndef f():\n    print(1)\n    return os.getpid()\n"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TouchedChecks(v, []workspace.Change{tt.change}, "", root)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("reasons (-got +want):\n%s", diff)
			}
		})
	}
}

func TestPyTopLevelCode(t *testing.T) {
	src := `"""Module doc with a call()
spanning lines (really)
"""
import os
from x import (
    a,
    b,
)

CONFIG = {
    "k": compute(),
}
VALUE = compute()
if os.environ.get("X"):
    pass

@decorator(arg)
def f():
    return g()


class C(Base):
    x = h()

if __name__ == "__main__":
    main()
`
	want := []string{"VALUE = compute()", `if os.environ.get("X"):`}
	if diff := cmp.Diff(pyTopLevelCode([]byte(src)), want); diff != "" {
		t.Errorf("top-level code (-got +want):\n%s", diff)
	}
}

// TestScriptsAndDataFiles: the script an interpreter runs and an option
// file are part of the check; a data file it reads is not.
func TestScriptsAndDataFiles(t *testing.T) {
	v := contract.Verify{Checks: []contract.Check{
		{Name: "py", Run: []string{"python3", "-u", "run_checks.py", "data.txt"}},
		{Name: "sh", Shell: "cd . && sh -e check.sh && grep -q ok out.txt"},
	}}
	for _, tt := range []struct {
		path string
		hold bool
	}{{"run_checks.py", true}, {"data.txt", false}, {"check.sh", true}, {"out.txt", false}} {
		got := TouchedChecks(v, []workspace.Change{{Path: tt.path, Op: workspace.OpModify, Content: []byte("x\n")}}, "", "")
		if (len(got) > 0) != tt.hold {
			t.Errorf("%s: reasons %q, want hold %v", tt.path, got, tt.hold)
		}
	}
}
