package testenv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// hostileHome makes a home whose user config (both the ~/.config and the
// XDG location) does not parse, as a broken or hostile config on a
// developer's machine would.
func hostileHome(t *testing.T) (home, xdg string) {
	t.Helper()
	home, xdg = t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(home, ".config", "ioh", "config.yaml"), filepath.Join(xdg, "ioh", "config.yaml")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("model: [this is not: a model\nno_such_key: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home, xdg
}

// TestIsolatedTestsDoNotReadTheUserConfig runs this test binary again in
// a world whose user config is broken; in the child, TestMain's
// isolation must hide it, so loading the configuration works. The control
// shows the planted config does break a load that reads it.
func TestIsolatedTestsDoNotReadTheUserConfig(t *testing.T) {
	if os.Getenv("IOH_TESTENV_CHILD") == "1" {
		if err := testenv.Check(); err != nil {
			t.Fatal(err)
		}
		if _, err := config.Load(config.LoadOptions{}); err != nil {
			t.Fatalf("the isolated child read a user config: %v", err)
		}
		return
	}
	home, xdg := hostileHome(t)
	_, err := config.Load(config.LoadOptions{Getenv: func(k string) string {
		return map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg}[k]
	}})
	if err == nil {
		t.Fatal("control: the planted config loads; it proves nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestIsolatedTestsDoNotReadTheUserConfig$", "-test.count=1")
	cmd.Env = append(os.Environ(), "IOH_TESTENV_CHILD=1", "HOME="+home, "XDG_CONFIG_HOME="+xdg, "XDG_STATE_HOME="+home, "IOH_STATE_DIR="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestHelperRootInsideParent: a test binary started by a test (as a
// helper process, which here ends with os.Exit and so skips its cleanup)
// isolates itself inside its parent's root, which the parent removes.
// Control: a child that inherits no root makes its own elsewhere.
func TestHelperRootInsideParent(t *testing.T) {
	if os.Getenv("IOH_TESTENV_CHILD") == "exit" {
		os.Stdout.WriteString("root=" + os.Getenv(testenv.RootEnv) + "\n")
		os.Exit(0)
	}
	parent := os.Getenv(testenv.RootEnv)
	for _, inherit := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperRootInsideParent$", "-test.count=1")
		cmd.Env = append(os.Environ(), "IOH_TESTENV_CHILD=exit")
		if !inherit {
			cmd.Env = append(cmd.Env, testenv.RootEnv+"=")
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		_, root, ok := strings.Cut(strings.TrimSpace(string(out)), "root=")
		if !ok || root == "" || root == parent {
			t.Fatalf("child printed %q", out)
		}
		inside := strings.HasPrefix(root, parent+string(filepath.Separator))
		if inside != inherit {
			t.Errorf("inherited a root: %v; the child's root %s is inside the parent's %s: %v", inherit, root, parent, inside)
		}
		if !inherit {
			os.RemoveAll(root) // the child exited without its cleanup
		}
	}
}

func TestCheck(t *testing.T) {
	if err := testenv.Check(); err != nil {
		t.Fatalf("this binary's TestMain isolated it, yet: %v", err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := testenv.Check(); err == nil || !strings.Contains(err.Error(), "XDG_CONFIG_HOME") {
		t.Fatalf("an XDG_CONFIG_HOME outside the root: got %v, want an error naming it", err)
	}
}

func TestIsolateKeepsTheGoCaches(t *testing.T) {
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		v := os.Getenv(k)
		if v == "" {
			t.Errorf("%s is not pinned", k)
			continue
		}
		if strings.HasPrefix(v, os.Getenv(testenv.RootEnv)) {
			t.Errorf("%s=%s moved into the test's root: builds would start cold", k, v)
		}
	}
}

// TestEveryTestBinaryIsIsolated reads every package's test files and fails
// for a test binary whose TestMain does not call testenv.Main.
func TestEveryTestBinaryIsIsolated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath, Dir           string
			TestGoFiles, XTestGoFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		files := append(p.TestGoFiles, p.XTestGoFiles...)
		if len(files) == 0 {
			continue
		}
		n++
		var srcs []string
		for _, f := range files {
			srcs = append(srcs, filepath.Join(p.Dir, f))
		}
		if why := isolated(srcs); why != "" {
			t.Errorf("%s: %s", p.ImportPath, why)
		}
	}
	if n < 10 {
		t.Fatalf("found only %d test packages: the test looks in the wrong place", n)
	}
}

// TestIsolationCheckCanFail shows the check above rejects a TestMain that
// forgets the isolation and a package without a TestMain.
func TestIsolationCheckCanFail(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("a_test.go", "package a\nimport \"testing\"\nfunc TestA(t *testing.T) {}\n")
	bare := write("b_test.go", "package a\nimport (\"os\"; \"testing\")\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n")
	good := write("c_test.go", "package a\nimport (\"os\"; \"testing\"; \"github.com/ioh-lsp/ioh-lsp/internal/testenv\")\nfunc TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }\n")
	for _, tc := range []struct {
		files []string
		ok    bool
	}{{[]string{plain}, false}, {[]string{plain, bare}, false}, {[]string{plain, good}, true}} {
		if why := isolated(tc.files); (why == "") != tc.ok {
			t.Errorf("%v: isolated = %q, want ok=%v", tc.files, why, tc.ok)
		}
	}
}

// isolated returns "" when one of the files declares a TestMain that calls
// testenv.Main, else why not.
func isolated(files []string) string {
	fset := token.NewFileSet()
	found := false
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err.Error()
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "TestMain" || fn.Recv != nil {
				continue
			}
			found = true
			calls := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Main" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testenv" {
						calls = true
					}
				}
				return !calls
			})
			if calls {
				return ""
			}
			return filepath.Base(path) + ": TestMain does not call testenv.Main (tests would read the user's real HOME and config)"
		}
	}
	if !found {
		names := slices.Clone(files)
		for i := range names {
			names[i] = filepath.Base(names[i])
		}
		return "no TestMain in " + strings.Join(names, ", ") + ": add one that calls testenv.Main"
	}
	return ""
}

// TestPackageTestsIgnoreAHostileUserConfig runs tests of the language
// server and the command line, which load the layered configuration, in a
// child go test whose HOME and XDG_CONFIG_HOME hold a config that does not
// parse. They must pass: their TestMain gives them a world of their own.
// (Before, both failed with the planted config's parse error.)
func TestPackageTestsIgnoreAHostileUserConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two other packages' tests")
	}
	home, xdg := hostileHome(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{"test", "-count=1", "-run", "^(TestRunTaskFileFromLensAndCodeAction|TestRunUsageErrors)$"}
	if raceFlag != "" {
		args = append(args, raceFlag)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./internal/lsp", "./cmd/ioh-lsp")...)
	cmd.Dir = "../.."
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, owned := testenv.Owned[k]; !owned && k != testenv.RootEnv {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+xdg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with a broken user config: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("ok")) || bytes.Contains(out, []byte("no tests to run")) {
		t.Fatalf("the child ran nothing:\n%s", out)
	}
}
