package archtest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// heavyInit lists modules whose package init is too costly for a binary
// that starts on every CLI command and for every sandboxed child. The
// JSON Schema library compiles all five drafts' metaschemas in init (8-16
// ms per start); the binary validates contracts with agent/contract's
// interpreter instead and uses the library only in tests.
var heavyInit = []string{
	"github.com/santhosh-tekuri/jsonschema",
}

func TestBinaryAvoidsHeavyInit(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/ioh-lsp")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if !contains(deps, module+"/cmd/ioh-lsp") || !contains(deps, module+"/agent/contract") {
		t.Fatalf("go list -deps ./cmd/ioh-lsp listed %d packages without the binary and its contract parser; the test is looking in the wrong place", len(deps))
	}
	for _, d := range deps {
		for _, heavy := range heavyInit {
			if d == heavy || strings.HasPrefix(d, heavy+"/") {
				t.Errorf("ioh-lsp depends on %s, whose init runs on every start; keep %s a test-only dependency", d, heavy)
			}
		}
	}
}
