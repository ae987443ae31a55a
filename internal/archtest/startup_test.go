package archtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Start-up guards (issue 11 item 4). Every CLI command and every
// re-executed sandbox stage starts the whole binary, and Go runs every
// linked package's initializers before main, whichever command was asked
// for. bench/startup.sh measures the cost against a hello-world program;
// these tests guard, with deterministic counts only, what made it large.

// regexpCompilers are the regexp functions that compile a pattern. A
// counted repetition such as [a-z]{1,64} compiles to one instruction per
// count: agent/mcptool's two name patterns cost 90 KB and 1,303
// allocations on every start.
var regexpCompilers = map[string]bool{"Compile": true, "MustCompile": true, "CompilePOSIX": true, "MustCompilePOSIX": true}

// initCompiles returns, for one parsed file, each place a regular
// expression is compiled while the package initializes: in a package-level
// variable's initializer or in an init function, but not inside a function
// literal (sync.OnceValue(func() *regexp.Regexp { ... }) compiles on first
// use).
func initCompiles(fset *token.FileSet, f *ast.File) []string {
	var names []string // what "regexp" is called in this file
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "regexp" {
			switch {
			case im.Name == nil:
				names = append(names, "regexp")
			case im.Name.Name != "_":
				names = append(names, im.Name.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	var out []string
	find := func(n ast.Node, where string) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || !regexpCompilers[sel.Sel.Name] {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil && contains(names, id.Name) {
					out = append(out, fmt.Sprintf("%s: %s.%s in %s", fset.Position(n.Pos()), id.Name, sel.Sel.Name, where))
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "init" && d.Body != nil {
				find(d.Body, "an init function")
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				vs := s.(*ast.ValueSpec)
				for _, v := range vs.Values {
					find(v, "the initializer of package-level var "+vs.Names[0].Name)
				}
			}
		}
	}
	return out
}

func TestInitCompilesFindsWhatRunsAtInit(t *testing.T) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"package var", "var re = regexp.MustCompile(`a{1,64}`)", 1},
		{"Compile and POSIX", "var a, _ = regexp.Compile(`a`)\nvar b = regexp.MustCompilePOSIX(`b`)", 2},
		{"in a var block, inside a composite", "var (\n\tx = 1\n\tres = []*regexp.Regexp{regexp.MustCompile(`a`), regexp.MustCompile(`b`)}\n)", 2},
		{"init function", "var re *regexp.Regexp\nfunc init() { re = regexp.MustCompile(`a`) }", 1},
		{"compiled on first use", "var re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`a`) })", 0},
		{"inside an ordinary function", "func f() bool { return regexp.MustCompile(`a`).MatchString(`a`) }", 0},
		{"a method of that name on something else", "type c struct{}\nfunc (c) MustCompile(string) int { return 0 }\nvar regexp2 c\nvar n = regexp2.MustCompile(`a`)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, imp := range []struct{ decl, name string }{{`"regexp"`, "regexp"}, {`rx "regexp"`, "rx"}} {
				src := "package p\n\nimport (\n\t" + imp.decl + "\n\t\"sync\"\n)\n\nvar _ = sync.OnceValue[int]\nvar _ *" + imp.name + ".Regexp\n\n" + strings.ReplaceAll(tt.src, "regexp.", imp.name+".")
				fset := token.NewFileSet()
				f, err := parser.ParseFile(fset, "p.go", src, 0)
				if err != nil {
					t.Fatalf("parse fixture: %v\n%s", err, src)
				}
				if got := initCompiles(fset, f); len(got) != tt.want {
					t.Errorf("import %s: found %d init-time compiles, want %d: %q\n%s", imp.decl, len(got), tt.want, got, src)
				}
			}
		})
	}
}

// moduleSourceFiles lists the non-test Go files of this module's packages
// that go into cmd/ioh-lsp on each platform the binary is built for.
func moduleSourceFiles(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seen := map[string]bool{}
	var files []string
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles", "./cmd/ioh-lsp")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v\n%s", goos, err, stderr.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			var p struct {
				ImportPath, Dir   string
				GoFiles, CgoFiles []string
			}
			if err := dec.Decode(&p); err != nil {
				t.Fatalf("decode go list output: %v", err)
			}
			if layer(p.ImportPath) == "" {
				continue
			}
			for _, f := range append(p.GoFiles, p.CgoFiles...) {
				if path := filepath.Join(p.Dir, f); !seen[path] {
					seen[path] = true
					files = append(files, path)
				}
			}
		}
	}
	sort.Strings(files)
	return files
}

func TestNoRegexpCompiledAtInit(t *testing.T) {
	files := moduleSourceFiles(t)
	var sawMCP bool
	fset := token.NewFileSet()
	var found []string
	for _, path := range files {
		sawMCP = sawMCP || strings.HasSuffix(filepath.ToSlash(path), "agent/mcptool/server.go")
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		found = append(found, initCompiles(fset, f)...)
	}
	if len(files) < 100 || !sawMCP {
		t.Fatalf("scanned %d files without agent/mcptool/server.go; the test is looking in the wrong place", len(files))
	}
	for _, f := range found {
		t.Errorf("%s: a regular expression compiled while the package initializes runs on every start of the binary (every CLI command, every sandbox stage); compile it on first use: var re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(...) })", f)
	}
}

// Init budgets, in bytes allocated by package initializers during one
// `ioh-lsp version` (GODEBUG=inittrace=1; deterministic for a given
// build). When this was written the whole binary's inits allocated about
// 425 KB (the anthropic SDK 88 KB, the MCP SDK's JSON Schema package
// 79 KB, encoding/gob 27 KB, yaml v4 25 KB, ...) and this module's own
// packages at most 7 KB each; 397 KB once the protobuf runtime left the
// binary (internal/telemetry's own OTLP encoder), and this module's
// packages at most 1.7 KB each once agent/verify's tables (6.9 KB) were
// built on first use.
const (
	ownPackageInitBytes = 4 << 10
	wholeInitBytes      = 416 << 10
)

// initStat is one package's line of GODEBUG=inittrace=1:
// "init PKG @T ms, C ms clock, B bytes, A allocs".
type initStat struct {
	pkg           string
	bytes, allocs int
}

func parseInittrace(out []byte) ([]initStat, error) {
	var stats []initStat
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("parse inittrace line %q", sc.Text())
		}
		stats = append(stats, initStat{f[1], b, a})
	}
	return stats, sc.Err()
}

func TestInitAllocationBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "ioh-lsp")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/ioh-lsp")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, bin, "version")
	run.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if out, err := run.Output(); err != nil || !strings.HasPrefix(string(out), "ioh-lsp ") {
		t.Fatalf("ioh-lsp version: %v, stdout %q\n%s", err, out, stderr.String())
	}
	stats, err := parseInittrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var total, own int
	var sawRuntime, sawModule bool
	for _, s := range stats {
		total += s.bytes
		sawRuntime = sawRuntime || s.pkg == "runtime"
		if s.pkg != "main" && layer(s.pkg) == "" {
			continue
		}
		sawModule = sawModule || layer(s.pkg) != ""
		own += s.bytes
		if s.bytes > ownPackageInitBytes {
			t.Errorf("%s allocates %d bytes in %d allocations while it initializes (budget %d per package of this module), on every start of the binary; compute package-level values on first use (sync.OnceValue) instead of in var initializers or init", s.pkg, s.bytes, s.allocs, ownPackageInitBytes)
		}
	}
	if !sawRuntime || !sawModule {
		t.Fatalf("GODEBUG=inittrace=1 printed no line for the runtime or this module's packages (%d lines parsed); the test is not measuring the binary\n%s", len(stats), stderr.String())
	}
	t.Logf("%d package initializers allocated %d bytes (this module's own: %d)", len(stats), total, own)
	if total > wholeInitBytes {
		sort.Slice(stats, func(i, j int) bool { return stats[i].bytes > stats[j].bytes })
		var top []string
		for _, s := range stats[:min(len(stats), 8)] {
			top = append(top, fmt.Sprintf("%s %d", s.pkg, s.bytes))
		}
		t.Errorf("the binary's package initializers allocate %d bytes per start (budget %d; the costliest: %s): a dependency or package added work to init, which every CLI command and sandbox stage pays; measure it with bench/startup.sh and keep it out of the binary, or raise the budget with the figures in the commit message", total, wholeInitBytes, strings.Join(top, ", "))
	}
}
