package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeTree writes files (slash paths) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// capture runs a real toolchain command in dir and returns its combined
// output; it skips the test when the tool is missing.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func capture(t *testing.T, dir string, env []string, argv ...string) string {
	t.Helper()
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		t.Skipf("%s not installed: %v", argv[0], err)
	}
	// A rustup shim without a toolchain is no compiler either.
	probe := "--version"
	if argv[0] == "go" {
		probe = "version"
	}
	if out, err := exec.Command(bin, probe).CombinedOutput(); err != nil {
		t.Skipf("%s is installed but does not run (%v): %s", argv[0], err, firstLine(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%v succeeded; the fixture should fail:\n%s", argv, out)
	}
	if ctx.Err() != nil {
		t.Skipf("%v did not finish in time", argv)
	}
	t.Logf("%v output:\n%s", argv, out)
	return string(out)
}

func TestParseGoReal(t *testing.T) {
	root := writeTree(t, map[string]string{
		"go.mod":          "module example.com/cap\n\ngo 1.21\n",
		"pkg/a/a.go":      "package a\n\nfunc Add(a, b int) int { return a - b }\n",
		"pkg/a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(1, 2); got != 3 {\n\t\tt.Errorf(\"Add(1, 2) = %d, want 3\", got)\n\t}\n}\n",
		"pkg/b/b.go":      "package b\n\nfunc F() int { return \"x\" }\n",
	})
	env := []string{"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off"}
	out := capture(t, root, env, "go", "test", "./...")
	got := Parse(out, ParseOptions{Root: root})
	want := []Location{
		{Path: "pkg/b/b.go", Line: 3, Col: 23, Message: `cannot use "x" (untyped string constant) as int value in return statement`},
		{Path: "pkg/a/a_test.go", Line: 7, Message: "Add(1, 2) = -1, want 3"},
	}
	if diff := cmp.Diff(sortLocs(got), sortLocs(want)); diff != "" {
		t.Errorf("go test (-got +want):\n%s", diff)
	}
	vet := capture(t, root, env, "go", "vet", "./pkg/b")
	if diff := cmp.Diff(Parse(vet, ParseOptions{Root: root}), want[:1]); diff != "" {
		t.Errorf("go vet (-got +want):\n%s", diff)
	}
}

func TestParseRustReal(t *testing.T) {
	root := writeTree(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"r\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"src/main.rs": "fn main() {\n    let x: i32 = \"s\";\n    println!(\"{}\", x);\n}\n",
	})
	env := []string{"CARGO_TARGET_DIR=" + t.TempDir(), "RUST_BACKTRACE=0", "CARGO_TERM_COLOR=never"}
	out := capture(t, root, env, "cargo", "build", "--offline", "--quiet")
	want := []Location{{Path: "src/main.rs", Line: 2, Col: 18, Message: "error[E0308]: mismatched types"}}
	if diff := cmp.Diff(Parse(out, ParseOptions{Root: root}), want); diff != "" {
		t.Errorf("cargo build (-got +want):\n%s", diff)
	}

	lib := writeTree(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"r\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn it_adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n",
	})
	out = capture(t, lib, env, "cargo", "test", "--offline", "--quiet")
	got := Parse(out, ParseOptions{Root: lib})
	if len(got) != 1 || got[0].Path != "src/lib.rs" || got[0].Line != 8 || got[0].Col != 9 {
		t.Errorf("cargo test panic: got %+v, want src/lib.rs:8:9", got)
	}
}

func TestParsePythonReal(t *testing.T) {
	root := writeTree(t, map[string]string{
		"pkg/conv.py":     "def parse(s):\n    return int(s) + 1\n",
		"test_x.py":       "import unittest\nfrom pkg.conv import parse\n\nclass T(unittest.TestCase):\n    def test_parse(self):\n        self.assertEqual(parse(\"1\"), 1)\n\n    def test_err(self):\n        parse(\"x\")\n",
		"pkg/__init__.py": "",
	})
	out := capture(t, root, []string{"PYTHONDONTWRITEBYTECODE=1"}, "python3", "-m", "unittest", "test_x")
	want := []Location{
		{Path: "pkg/conv.py", Line: 2, Message: "ValueError: invalid literal for int() with base 10: 'x'"},
		{Path: "test_x.py", Line: 6, Message: "AssertionError: 2 != 1"},
	}
	if diff := cmp.Diff(sortLocs(Parse(out, ParseOptions{Root: root})), sortLocs(want)); diff != "" {
		t.Errorf("python unittest (-got +want):\n%s", diff)
	}
}

func TestParseTypeScriptReal(t *testing.T) {
	tsc := "tsc"
	if _, err := exec.LookPath(tsc); err != nil {
		// The VS Code extension's dev dependencies carry a tsc.
		_, file, _, _ := runtime.Caller(0)
		tsc = filepath.Join(filepath.Dir(file), "..", "..", "..", "editors", "vscode", "node_modules", ".bin", "tsc")
		if _, err := os.Stat(tsc); err != nil {
			t.Skip("tsc not installed (neither on PATH nor in editors/vscode/node_modules)")
		}
	}
	root := writeTree(t, map[string]string{
		"src/a.ts": "export function f(): number {\n  const x: number = \"s\";\n  return x;\n}\n",
	})
	want := []Location{{Path: "src/a.ts", Line: 2, Col: 9, Message: "TS2322: Type 'string' is not assignable to type 'number'."}}
	for _, pretty := range []string{"false", "true"} {
		out := capture(t, root, nil, tsc, "--noEmit", "--pretty", pretty, "src/a.ts")
		if diff := cmp.Diff(Parse(out, ParseOptions{Root: root}), want); diff != "" {
			t.Errorf("tsc --pretty %s (-got +want):\n%s", pretty, diff)
		}
	}
}

func TestParseNodeReal(t *testing.T) {
	root := writeTree(t, map[string]string{
		"lib/g.js":  "function g(x) {\n  if (x < 2) throw new Error(\"too small: \" + x);\n}\nmodule.exports = { g };\n",
		"main.js":   "const { g } = require('./lib/g');\ng(1);\n",
		"t.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => { assert.strictEqual(1 + 1, 3); });\n",
	})
	out := capture(t, root, nil, "node", "main.js")
	want := []Location{{Path: "lib/g.js", Line: 2, Col: 20, Message: "Error: too small: 1"}}
	if diff := cmp.Diff(Parse(out, ParseOptions{Root: root}), want); diff != "" {
		t.Errorf("node (-got +want):\n%s", diff)
	}
	out = capture(t, root, nil, "node", "--test", "t.test.js")
	got := Parse(out, ParseOptions{Root: root})
	if len(got) == 0 || got[0].Path != "t.test.js" || got[0].Line != 3 {
		t.Errorf("node --test: got %+v, want t.test.js:3 first", got)
	}
}

// TestParseFormats pins the grammar of formats whose tools this machine
// may lack (pytest, eslint) and the path mapping rules; the lines are the
// tools' documented output shapes.
func TestParseFormats(t *testing.T) {
	root := writeTree(t, map[string]string{"tests/test_a.py": "", "src/app.js": "", "Makefile": "", "src/main.c": ""})
	tests := []struct {
		name, out string
		want      []Location
	}{
		{"pytest", "tests/test_a.py:3: AssertionError\n", []Location{{Path: "tests/test_a.py", Line: 3, Message: "AssertionError"}}},
		{"eslint unix", root + "/src/app.js:3:5: 'x' is defined but never used. [Error/no-unused-vars]\n",
			[]Location{{Path: "src/app.js", Line: 3, Col: 5, Message: "'x' is defined but never used. [Error/no-unused-vars]"}}},
		{"eslint stylish", "\n" + root + "/src/app.js\n  3:5  error  'x' is defined but never used  no-unused-vars\n\n✖ 1 problem\n",
			[]Location{{Path: "src/app.js", Line: 3, Col: 5, Message: "'x' is defined but never used"}}},
		{"make", "Makefile:2: *** missing separator.  Stop.\n", []Location{{Path: "Makefile", Line: 2, Message: "*** missing separator.  Stop."}}},
		{"staged copy", "/tmp/stage-123/merged/src/main.c:4:1: error: x\n", []Location{{Path: "src/main.c", Line: 4, Col: 1, Message: "error: x"}}},
		{"coloured", "\x1b[31msrc/main.c\x1b[0m:4:1: bad\n", []Location{{Path: "src/main.c", Line: 4, Col: 1, Message: "bad"}}},
		{"not files", "12:30:45: started\nsee http://example.com:8080: down\nnope.go:3: absent\n", nil},
		{"duplicates", "src/main.c:4:1: x\nsrc/main.c:4:1: x\n", []Location{{Path: "src/main.c", Line: 4, Col: 1, Message: "x"}}},
		{"rust old panic", "thread 'main' panicked at 'boom', src/main.c:9:5\n", []Location{{Path: "src/main.c", Line: 9, Col: 5, Message: "boom"}}},
	}
	for _, tt := range tests {
		got := Parse(tt.out, ParseOptions{Root: root})
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tt.name, diff)
		}
	}
	// A file only the change set has counts as a workspace file.
	got := Parse("new/x.go:1:2: y\n", ParseOptions{Root: root, Changed: []string{"new/x.go"}})
	if diff := cmp.Diff(got, []Location{{Path: "new/x.go", Line: 1, Col: 2, Message: "y"}}); diff != "" {
		t.Errorf("changed file (-got +want):\n%s", diff)
	}
}

func sortLocs(ls []Location) []Location {
	out := append([]Location(nil), ls...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Path < out[j-1].Path; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
