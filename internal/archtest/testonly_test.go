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
