package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/ioh-lsp/ioh-lsp"

// domains are the engine's layers, which live under internal/ (nothing
// outside the module imports them; the facade ioh is the public surface)
// but keep their own rules: internal/agent/tools is in layer "agent".
var domains = []string{"workspace", "sandbox", "agent", "lsp", "acp", "netproxy", "eval", "jsonrpc"}

// layer returns the layer of a module package ("workspace", "sandbox",
// "agent", "lsp", "cmd", "internal", ...) or "" for packages outside the
// module. Under internal/, a domain's directory names its layer; the rest
// of internal/ (the wiring, test support) is layer "internal".
func layer(pkg string) string {
	if pkg != module && !strings.HasPrefix(pkg, module+"/") {
		return ""
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	top, rest, _ := strings.Cut(rest, "/")
	if top == "internal" {
		if next, _, _ := strings.Cut(rest, "/"); contains(domains, next) {
			return next
		}
	}
	return top
}

// allowed lists, for each layer, the module layers it may import (besides
// itself), as docs/architecture.md#layers explains: workspace and sandbox
// are leaves; agent may import workspace (and the embedded JSON Schema);
// lsp may import agent and workspace; only cmd (and the wiring under
// internal/) wires everything.
var allowed = map[string][]string{
	"workspace": nil,
	"sandbox":   nil,
	"agent":     {"workspace", "schema"},
	"lsp":       {"agent", "workspace", "jsonrpc"},
	// acp is the Agent Client Protocol agent, lsp's sibling: the same
	// engine, a different wire; neither imports the other. Both speak
	// JSON-RPC through jsonrpc, a leaf (its two framers are the wires).
	"acp":     {"agent", "workspace", "jsonrpc"},
	"jsonrpc": nil,
	"cmd":     {"agent", "workspace", "sandbox", "lsp", "acp", "internal", "examples", "schema", "netproxy", "eval"},
	// internal holds the wiring shared by cmd and by integration tests
	// (the sandbox adapter, harness construction).
	"internal": {"agent", "workspace", "sandbox", "lsp", "schema", "examples", "netproxy"},
	"examples": nil,
	"schema":   nil,
	// bench holds measuring programs for `make bench`; they drive the
	// domain packages (the workspace, the agent's tools) directly, never
	// the server's wiring.
	"bench": {"workspace", "agent", "netproxy"},
	// netproxy is the egress proxy of a run, started by the wiring
	// outside the sandbox: a leaf like sandbox.
	"netproxy": nil,
	// eval runs suites of tasks through the same wiring as `ioh-lsp run`
	// (internal/wire), so it sits beside cmd, under it.
	"eval": {"agent", "workspace", "internal", "schema"},
	// ioh is the library surface for embedders: a facade over the
	// engine's wiring and the sandbox, beside cmd.
	"ioh": {"agent", "workspace", "sandbox", "internal"},
}

// protocolFree lists layers that must not depend on go.lsp.dev, even
// transitively (STYLE point 2).
var protocolFree = []string{"workspace", "sandbox", "agent", "acp"}

type pkgInfo struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkgInfo
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 4 {
		t.Fatalf("go list found only %d packages; the test is looking in the wrong place", len(pkgs))
	}
	return pkgs
}

func TestLayering(t *testing.T) {
	for _, p := range listPackages(t) {
		from := layer(p.ImportPath)
		ok, known := allowed[from]
		if !known {
			t.Errorf("package %s is in layer %q, which the layering rules do not know; add it to allowed", p.ImportPath, from)
			continue
		}
		for _, imp := range p.Imports {
			to := layer(imp)
			if to == "" || to == from {
				continue
			}
			if !contains(ok, to) {
				t.Errorf("forbidden import edge: %s (%s) imports %s (%s)", p.ImportPath, from, imp, to)
			}
		}
	}
}

func TestProtocolTypesStayAtTheEdge(t *testing.T) {
	for _, p := range listPackages(t) {
		if !contains(protocolFree, layer(p.ImportPath)) {
			continue
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "go.lsp.dev/") {
				t.Errorf("%s depends on %s: protocol types belong in lsp/ only", p.ImportPath, d)
			}
		}
	}
}

// TestLayerRuleCatchesAnEdge makes sure the rule itself can fail.
func TestLayerRuleCatchesAnEdge(t *testing.T) {
	if got := layer(module + "/internal/agent/tools"); got != "agent" {
		t.Fatalf("layer = %q, want agent", got)
	}
	if contains(allowed["workspace"], layer(module+"/internal/agent")) {
		t.Fatal("workspace may not import agent, but the rules allow it")
	}
	if contains(allowed["agent"], "sandbox") || contains(allowed["agent"], "lsp") {
		t.Fatal("agent may not import sandbox or lsp, but the rules allow it")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
