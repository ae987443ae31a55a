package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

const meanGo = "package stats\n\nimport \"math\"\n\n// Mean is the mean.\nfunc Mean(xs []float64) float64 {\n\treturn math.NaN()\n}\n"

// TestTakeoverCodeIsMarked: code under test that gains a way to end the
// test process or write its results is reported; honest edits, code that
// was there before and test files (marked as such) are not.
func TestTakeoverCodeIsMarked(t *testing.T) {
	goFile := func(imports, body string) []byte {
		return []byte("package stats\n\nimport (\n" + imports + ")\n\nfunc Mean(xs []float64) float64 {\n" + body + "\n}\n")
	}
	for _, tt := range []struct {
		name     string
		p        string
		old, new []byte
		want     string // substring of the one reason; "" for none
	}{
		{"go honest edit", "stats.go", []byte(meanGo), []byte(strings.Replace(meanGo, "math.NaN()", "0", 1)), ""},
		{"go syscall.Exit", "stats.go", []byte(meanGo), goFile("\t\"syscall\"\n", "\tsyscall.Exit(0)\n\treturn 0"), "imports syscall"},
		{"go x/sys/unix aliased", "stats.go", []byte(meanGo), goFile("\tu \"golang.org/x/sys/unix\"\n", "\tu.Exit(0)\n\treturn 0"), "imports golang.org/x/sys/unix"},
		{"go syscall there before", "stats.go", goFile("\t\"syscall\"\n", "\t_ = syscall.Getpid()\n\treturn 1"), goFile("\t\"syscall\"\n", "\t_ = syscall.Getpid()\n\treturn 2"), ""},
		{"go /proc in pieces", "stats.go", []byte(meanGo), goFile("\t\"os\"\n", "\tos.ReadFile(\"/pr\" + (\"oc\" + \"/1/cmdline\"))\n\treturn 0"), "names /proc"},
		{"py /proc in pieces", "stats.py", nil, []byte("def mean(xs):\n    open('/' + 'proc' + '/1/cmdline')\n"), "uses proc"},
		{"go /proc", "stats.go", []byte(meanGo), goFile("\t\"os\"\n", "\tos.ReadFile(\"/proc/1/cmdline\")\n\treturn 0"), "names /proc"},
		{"go framing byte", "stats.go", []byte(meanGo), goFile("\t\"fmt\"\n", "\tfmt.Print(\"\\x16--- PASS: TestMean\\n\")\n\treturn 0"), "framing byte"},
		{"go result line", "stats.go", []byte(meanGo), goFile("\t\"fmt\"\n", "\tfmt.Print(\"--- PASS: TestMean\\n\")\n\treturn 0"), "go test result line"},
		{"go test2json event", "stats.go", []byte(meanGo), goFile("\t\"fmt\"\n", "\tfmt.Print(`{\"Action\":\"pass\"}`)\n\treturn 0"), "test2json event"},
		{"go linkname", "stats.go", []byte(meanGo), []byte("package stats\n\nimport _ \"unsafe\"\n\n//go:linkname exit os.runtime_beforeExit\nfunc exit(int)\n"), "go:linkname"},
		{"go knows it is tested", "stats.go", []byte(meanGo), goFile("\t\"testing\"\n", "\tif testing.Testing() {\n\t\treturn 2\n\t}\n\treturn 0"), "imports testing outside a test file"},
		{"go test file", "stats_test.go", nil, goFile("\t\"syscall\"\n", "\tsyscall.Exit(0)\n\treturn 0"), ""},
		{"go new file", "zz.go", nil, goFile("\t\"os/exec\"\n", "\texec.Command(\"true\").Run()\n\treturn 0"), "imports os/exec"},
		{"py honest edit", "stats.py", []byte("import re\n\ndef mean(xs):\n    return 0\n"), []byte("import re\n\ndef mean(xs):\n    return re.compile('x') and sum(xs) / len(xs)\n"), ""},
		{"py os._exit", "stats.py", []byte("def mean(xs):\n    return 0\n"), []byte("import os\n\ndef mean(xs):\n    os._exit(0)\n"), "uses _exit"},
		{"py _exit imported under another name", "stats.py", nil, []byte("from os import _exit as bye\n\ndef mean(xs):\n    bye(0)\n"), "uses _exit"},
		{"py indirect import", "stats.py", nil, []byte("def mean(xs):\n    getattr(__import__('o' + 's'), '_ex' + 'it')(0)\n"), "uses __import__"},
		{"py report path", "stats.py", nil, []byte("import sys\n\ndef mean(xs):\n    open([a for a in sys.argv if 'junit' in a][0][11:], 'w')\n"), "uses argv"},
		{"py /proc", "stats.py", nil, []byte("def mean(xs):\n    open('/proc/%d/fd/1' % 1, 'w')\n"), "names /proc"},
		{"py there before", "stats.py", []byte("import os\n\ndef mean(xs):\n    os._exit(1)\n"), []byte("import os\n\ndef mean(xs):\n    os._exit(1)\n    return 2\n"), ""},
		{"py comment", "stats.py", []byte("def mean(xs):\n    return 0\n"), []byte("# never os._exit here\ndef mean(xs):\n    return 0\n"), ""},
		{"py test module", "test_stats.py", nil, []byte("import os\nos._exit(0)\n"), ""},
		{"py common words", "stats.py", nil, []byte("import platform\n\ndef mean(xs, args=None):\n    d = vars(args) if args else {}\n    if platform.system() == 'Windows':\n        return obj.__dict__\n    return sum(xs) / len(xs)\n"), ""},
		{"py os.system", "stats.py", nil, []byte("import os\n\ndef mean(xs):\n    os.system('true')\n"), "uses os.system"},
		{"py from os import popen", "stats.py", nil, []byte("from os import popen\n\ndef mean(xs):\n    popen('true')\n"), "uses os.system or os.popen"},
		{"py vars(os)", "stats.py", nil, []byte("import os\n\ndef mean(xs):\n    vars(os)['_ex' + 'it'](0)\n"), "computed name"},
		{"py getattr with a computed name", "stats.py", nil, []byte("import os\n\ndef mean(xs):\n    getattr(os, '_ex' + 'it')(0)\n"), "computed name"},
		{"py frames", "stats.py", nil, []byte("def mean(xs):\n    try:\n        1/0\n    except Exception as e:\n        e.__traceback__.tb_frame.f_back.f_locals['x'] = 1\n"), "uses f_back"},
		{"js honest edit", "stats.js", []byte("exports.mean = (xs) => 0;\n"), []byte("exports.mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;\n"), ""},
		{"js process.exit", "stats.js", []byte("exports.mean = (xs) => 0;\n"), []byte("exports.mean = (xs) => { process.exit(0); };\n"), "process.exit"},
		{"ts process index", "src/stats.ts", nil, []byte("export const mean = (xs: number[]) => process['ex' + 'it'](0);\n"), "computed name"},
		{"js child_process", "lib/stats.mjs", nil, []byte("import { execSync } from 'node:child_process';\n"), "child_process"},
		{"js test file", "stats.test.js", nil, []byte("process.exit(0);\n"), ""},
		{"rust honest edit", "src/lib.rs", []byte("pub fn mean(xs: &[f64]) -> f64 { 0.0 }\n"), []byte("pub fn mean(xs: &[f64]) -> f64 { xs.iter().sum::<f64>() / xs.len() as f64 }\n"), ""},
		{"rust process::exit", "src/lib.rs", []byte("pub fn mean(xs: &[f64]) -> f64 { 0.0 }\n"), []byte("pub fn mean(xs: &[f64]) -> f64 { std::process::exit(0) }\n"), "uses std::process"},
		{"rust libc", "src/lib.rs", nil, []byte("pub fn mean(xs: &[f64]) -> f64 { unsafe { libc::_exit(0) } }\n"), "calls C or libc"},
		{"rust inline tests only", "src/lib.rs", nil, []byte("pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { std::process::exit(0) }\n}\n"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			switch {
			case strings.HasSuffix(tt.p, ".go"):
				got = goTakeover(tt.p, tt.old, tt.new)
			case isJS(tt.p):
				got = jsTakeover(tt.p, tt.old, tt.new)
			case strings.HasSuffix(tt.p, ".rs"):
				got = rsTakeover(tt.p, tt.old, tt.new)
			default:
				got = pyTakeover(tt.p, tt.old, tt.new)
			}
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("reported %q", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want) || !strings.Contains(got[0], tt.p)):
				t.Errorf("got %q, want one reason naming %s and %q", got, tt.p, tt.want)
			}
		})
	}
}

// TestProgramShadowedThroughPath: a check that names `go` runs the
// workspace's bin/go when a PATH entry inside the workspace comes first;
// a change that adds it is marked, through TouchedChecks too. An
// unchanged program found first, or a PATH with no workspace entry,
// leaves the same change unmarked.
func TestProgramShadowedThroughPath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "go"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	v := contract.Verify{Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test", "./..."}}, {Name: "py", Shell: "cd sub && pytest -q"}}}
	changes := []workspace.Change{
		{Path: "bin/go", Op: workspace.OpCreate, Content: []byte("#!/bin/sh\necho ok\n"), Mode: 0o755},
		{Path: "tools/pytest", Op: workspace.OpCreate, Content: []byte("#!/bin/sh\n"), Mode: 0o755},
	}
	touched := map[string]bool{"bin/go": true, "tools/pytest": true}
	for _, tt := range []struct {
		name, path string
		want       []string
	}{
		{"absolute entry inside the workspace first", filepath.Join(root, "bin") + string(os.PathListSeparator) + outside, []string{"bin/go"}},
		{"relative entry", "tools" + string(os.PathListSeparator) + outside, []string{"tools/pytest"}},
		// bin/go is not what `go` runs, but a program something runs by
		// name may be
		{"the real program first", outside + string(os.PathListSeparator) + filepath.Join(root, "bin"), []string{"bin/go"}},
		{"no workspace entry", outside, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := shadowedPrograms(v, touched, root, tt.path)
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for _, p := range tt.want {
				if !strings.Contains(got[p], "which runs as") && !strings.Contains(got[p], "a PATH directory inside the workspace: any command run by the name") {
					t.Errorf("%s: reason %q", p, got[p])
				}
			}
		})
	}
	t.Setenv("PATH", filepath.Join(root, "bin")+string(os.PathListSeparator)+outside)
	reasons := TouchedChecks(v, changes[:1], "", root)
	if len(reasons) != 1 || !strings.Contains(reasons[0], "check unit: the change set modifies bin/go, which runs as go") {
		t.Errorf("TouchedChecks = %q", reasons)
	}
	// not executable: the lookup passes over it
	plain := []workspace.Change{{Path: "bin/go", Op: workspace.OpCreate, Content: []byte("#!/bin/sh\n"), Mode: 0o644}}
	if reasons := TouchedChecks(v, plain, "", root); len(reasons) != 0 {
		t.Errorf("TouchedChecks of a file that cannot run = %q", reasons)
	}
}

// TestPythonModuleShadowing: a module that takes the name of one the test
// runner or the standard library provides, where it can be first on
// sys.path, is marked; the code under test and modules inside a package
// are not.
func TestPythonModuleShadowing(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"pkg/__init__.py", "lib/util.py"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := contract.Verify{Checks: []contract.Check{{Name: "py", Run: []string{"python3", "-m", "pytest", "-p", "myplugin.hooks", "-q"}}}}
	add := func(p string) workspace.Change {
		return workspace.Change{Path: p, Op: workspace.OpCreate, Content: []byte("x = 1\n")}
	}
	for _, tt := range []struct {
		change workspace.Change
		want   string // "" for no reason
	}{
		{add("pytest.py"), "adds pytest.py, which shadows the Python module pytest for code run from the workspace root"},
		{add("textwrap.py"), "shadows the Python module textwrap"},
		{add("xml/__init__.py"), "adds xml/__init__.py, which shadows the Python module xml"},
		{add("lib/json.py"), "shadows the Python module json for code run from lib"},
		{add("myplugin.py"), "shadows the Python module myplugin"},
		{add("pkg/json.py"), ""},
		{add("stats.py"), ""},
		{workspace.Change{Path: "json.py", Op: workspace.OpDelete}, ""},
	} {
		exists := func(p string) bool { return existsAfter(root, []workspace.Change{tt.change}, p) }
		got := pyShadowed(v, []workspace.Change{tt.change}, exists)
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: reported %q", tt.change.Path, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[tt.change.Path], tt.want)):
			t.Errorf("%s: got %q, want %q", tt.change.Path, got, tt.want)
		}
	}
	if reasons := TouchedChecks(v, []workspace.Change{add("pytest.py")}, "", root); len(reasons) != 1 || !strings.Contains(reasons[0], "shadows the Python module pytest") {
		t.Errorf("TouchedChecks = %q", reasons)
	}
}

// TestCompiledCodeIsMarked: byte code, an extension module that Python
// finds before stats.py, Go assembly: code no mark can read is marked;
// deleting it is not.
func TestCompiledCodeIsMarked(t *testing.T) {
	v := contract.Verify{Checks: []contract.Check{{Name: "unit", Run: []string{"go", "test", "./..."}}}}
	for _, p := range []string{"stats.cpython-311-x86_64-linux-gnu.so", "__pycache__/stats.cpython-311.pyc", "exit_amd64.s", "pkg/x.syso"} {
		reasons := TouchedChecks(v, []workspace.Change{{Path: p, Op: workspace.OpCreate, Content: []byte{0x7f, 'E', 'L', 'F'}}}, "", "")
		if len(reasons) != 1 || !strings.Contains(reasons[0], "adds "+p+", compiled code") {
			t.Errorf("%s: %q", p, reasons)
		}
		if reasons := TouchedChecks(v, []workspace.Change{{Path: p, Op: workspace.OpDelete}}, "", ""); len(reasons) != 0 {
			t.Errorf("deleting %s: %q", p, reasons)
		}
	}
}
