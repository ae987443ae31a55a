package archtest

import (
	"strings"
	"testing"
)

// testOnly are packages that belong to tests alone: testing registers its
// flags and pulls its runner into whatever links it, and lsp/lsptest (the
// pipe-driven fake editor's test harness) imports testing. The demo's
// scripted editor is lsp/lspclient, which the binary may link.
var testOnly = []string{
	"testing",
	"testing/fstest",
	"testing/iotest",
	"testing/quick",
	"net/http/httptest",
	module + "/internal/lsp/lsptest",
}

func TestBinaryLinksNoTestPackages(t *testing.T) {
	deps := binaryDeps(t)
	if !contains(deps, module+"/internal/lsp/lspclient") {
		t.Fatalf("lsp/lspclient is not among ioh-lsp's %d packages; the demo's editor moved, update the test", len(deps))
	}
	for _, d := range deps {
		for _, bad := range testOnly {
			if d == bad || (strings.HasPrefix(bad, module+"/") && under(d, bad)) {
				t.Errorf("ioh-lsp links %s, a test-only package: find which import brings it in (go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/ioh-lsp) and move what the binary needs into a package that does not import testing", d)
			}
		}
	}
}

// testHelpers are the module's packages for tests alone: test files
// import them, and so may the other test helpers, never the code they
// test (a helper links testing and changes a process's environment).
var testHelpers = []string{"internal/testenv", "internal/sandbox/sandboxtest", "internal/lsp/lsptest"}

// testHelperEdges returns the test helpers that p's non-test code imports.
func testHelperEdges(p pkgInfo) []string {
	if underAny(strings.TrimPrefix(p.ImportPath, module+"/"), testHelpers) {
		return nil
	}
	var bad []string
	for _, imp := range p.Imports {
		if under(imp, module) && underAny(strings.TrimPrefix(imp, module+"/"), testHelpers) {
			bad = append(bad, imp)
		}
	}
	return bad
}

func TestTestHelpersOnlyInTests(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range testHelperEdges(p) {
			t.Errorf("%s imports %s, a test helper, outside its tests: move what it needs into a package that is not for tests", p.ImportPath, imp)
		}
	}
}

// TestTestHelperEdgeCaught makes sure the rule itself can fail.
func TestTestHelperEdgeCaught(t *testing.T) {
	bad := pkgInfo{ImportPath: module + "/internal/wire", Imports: []string{"os", module + "/internal/sandbox", module + "/internal/sandbox/sandboxtest"}}
	if got := testHelperEdges(bad); len(got) != 1 || got[0] != module+"/internal/sandbox/sandboxtest" {
		t.Fatalf("the wiring importing sandboxtest: got %v, want the one edge", got)
	}
	helper := pkgInfo{ImportPath: module + "/internal/testenv", Imports: []string{module + "/internal/sandbox/sandboxtest"}}
	if got := testHelperEdges(helper); len(got) != 0 {
		t.Fatalf("a test helper importing another: got %v, want nothing", got)
	}
}
