package archtest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// heavyInit lists modules whose package init is too costly for a binary
// that starts on every CLI command and for every sandboxed child, each
// with what it cost and what the binary does instead (tests may use
// them).
var heavyInit = []struct{ pkg, why string }{
	// Compiles all five drafts' metaschemas in init.
	{"github.com/santhosh-tekuri/jsonschema", "8-16 ms per start; contracts are validated with agent/contract's interpreter of the schema's subset"},
	// The generated OTLP types register their descriptors with the
	// protobuf runtime, whose packages (registry, reflection, detrand,
	// which hashes the executable) initialize on every start; the binary
	// was also 5 MB larger with them.
	{"google.golang.org/protobuf", "a dozen package inits, 0.15 ms and ~35 page faults per start; internal/telemetry writes the OTLP wire format itself (pbwire.go)"},
	{"go.opentelemetry.io/proto/otlp", "the generated OTLP types pull in the protobuf runtime; internal/telemetry writes the OTLP wire format itself (pbwire.go)"},
}

// deadMethodKillers lists packages whose code calls reflect.Value.Method
// or MethodByName with a name known only at run time. The linker cannot
// then tell which exported methods may be called by reflection, so it
// keeps every exported method of every reachable type in the whole
// program: when OTLP export pulled in gRPC (google.golang.org/grpc ->
// golang.org/x/net/trace -> html/template -> text/template, whose
// evalField calls MethodByName), the binary went from 36 to 73 MB and
// its .text from 12 to 22 MB (the anthropic SDK alone from 1.6 to 6.7 MB),
// and every sandboxed stage re-executes this binary. internal/telemetry
// encodes OTLP itself instead; keep these out (tests may use them).
var deadMethodKillers = []string{
	"text/template",
	"html/template",
	"golang.org/x/net/trace",
	"google.golang.org/grpc",
}

// binaryDeps lists the packages linked into cmd/ioh-lsp.
func binaryDeps(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "./cmd/ioh-lsp")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := strings.Fields(string(out))
	if !contains(deps, module+"/cmd/ioh-lsp") || !contains(deps, module+"/internal/agent/contract") {
		t.Fatalf("go list -deps ./cmd/ioh-lsp listed %d packages without the binary and its contract parser; the test is looking in the wrong place", len(deps))
	}
	return deps
}

// under reports whether package d is pkg or one of its subpackages.
func under(d, pkg string) bool { return d == pkg || strings.HasPrefix(d, pkg+"/") }

func TestBinaryAvoidsHeavyInit(t *testing.T) {
	deps := binaryDeps(t)
	for _, heavy := range heavyInit {
		var hits []string
		for _, d := range deps {
			if under(d, heavy.pkg) {
				hits = append(hits, d)
			}
		}
		if len(hits) > 0 {
			t.Errorf("ioh-lsp depends on %s (%d packages: %s), whose init runs on every start (%s); find which import brings it in (go list -deps) and keep %s a test-only dependency", heavy.pkg, len(hits), strings.Join(hits[:min(len(hits), 3)], ", "), heavy.why, heavy.pkg)
		}
	}
}

func TestBinaryKeepsDeadMethodElimination(t *testing.T) {
	deps := binaryDeps(t)
	if !contains(deps, module+"/internal/telemetry") {
		t.Fatalf("internal/telemetry is not among ioh-lsp's %d packages; the OTLP exporter this guards moved, update the test", len(deps))
	}
	for _, bad := range deadMethodKillers {
		var hits []string
		for _, d := range deps {
			if under(d, bad) {
				hits = append(hits, d)
			}
		}
		if len(hits) > 0 {
			t.Errorf("ioh-lsp depends on %s (%d packages: %s): it calls reflect Method/MethodByName with a run-time name (directly or through what it imports), which turns off the linker's dead-method elimination for the whole program and doubles the binary; find which import brings it in (go list -deps, go build -ldflags=-dumpdep) and keep %s out of the binary (tests may use it)", bad, len(hits), strings.Join(hits[:min(len(hits), 3)], ", "), bad)
		}
	}
}
