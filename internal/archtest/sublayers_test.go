package archtest

import (
	"strings"
	"testing"
)

// A subRule constrains the module imports of the packages at or under
// pkg (a path relative to the module), inside a layer that TestLayering
// treats as one: which of the engine's own parts may reach which.
//
//   - only: every module import must be at or under one of these paths
//     (an empty, non-nil list: a leaf that imports nothing of the module).
//   - deny: no module import may be at or under one of these paths, even
//     one inside pkg's own subtree (the mechanism and its policy package).
//
// Imports of a package's own subtree are otherwise always allowed.
type subRule struct {
	pkg  string
	only []string
	deny []string
	why  string
}

// subRules are the sub-layers of docs/architecture.md#layers. Each area
// adds its rows here; keep the why short and true.
var subRules = []subRule{
	{pkg: "internal/agent/suggest", only: []string{}, why: "the did-you-mean distance is a leaf that the config and contract parsers share"},
	{pkg: "internal/sandbox/internal/ruleset", only: []string{}, why: "Landlock rulesets built from paths and rights: a leaf; which path gets which right is the mechanism's"},
	{pkg: "internal/sandbox/internal/rootfs", only: []string{}, why: "how the private root is built and the hint's format and check, from plain paths and flags: a leaf; which path is bound, masked or protected is the mechanism's"},
	{pkg: "internal/sandbox/internal/cgroups", only: []string{}, why: "a run's control groups from two caps: a leaf that knows nothing else of a run"},
	{pkg: "internal/sandbox/internal/seccomp", only: []string{}, why: "BPF built from a syscall list and a table: a leaf that decides nothing about a run"},
	{pkg: "internal/sandbox/internal/gocache", only: []string{}, why: "the GOCACHEPROG server reads one cache and writes another: a leaf; when a run gets it is the mechanism's"},
	{pkg: "internal/sandbox/internal/initprog", only: []string{}, why: "finding and checking the small init program is a leaf: when to use it and what a refusal means are the mechanism's"},
	{pkg: "internal/sandbox/internal/pid1", only: []string{}, why: "PID 1's steps on itself and its new namespaces need only the memory cap: a leaf; when each runs is the mechanism's"},
	{pkg: "internal/sandbox/internal/reaper", only: []string{}, why: "reaping and killing what is below a sandbox's first process: a leaf that reads /proc and waits, and decides nothing about a run"},
	{pkg: "internal/sandbox/internal/stagecfg", only: []string{}, why: "what the caller hands a stage on fd 3 (the config, its frame, the go line): a leaf that decides nothing about a run"},
	{pkg: "internal/sandbox/internal/view", only: []string{}, why: "the View type and its path algebra are a leaf both the mechanism and the policy import, so neither imports the other"},
	{pkg: "internal/sandbox/policy", only: []string{"internal/sandbox/internal/view"}, why: "the policy builds a view and knows nothing of the mechanism that applies it"},
	{pkg: "internal/sandbox/sandboxtest", only: []string{}, why: "the sandbox tests' helpers import nothing of the module, so package sandbox's own tests can use them; a tier's probe is handed in"},
	{pkg: "internal/sandbox", deny: []string{"internal/sandbox/policy"}, why: "the mechanism applies the view in the Spec; which host paths are readable is the policy's, never its own"},
	{pkg: "internal/agent/event", only: []string{}, why: "the event types are the vocabulary every reader and the store share: a leaf"},
	{pkg: "internal/agent/redact", only: []string{}, why: "the redactor is a leaf that the store, the harness and the command line share"},
	{pkg: "internal/agent/render", only: []string{"internal/agent/event"}, why: "the renderer reads events only, never the store"},
	{pkg: "internal/agent/trace", deny: []string{"internal/agent/render"}, why: "the store keeps events; how a person reads them is the renderer's"},
	{pkg: "internal/jsonrpc", only: []string{}, why: "the one JSON-RPC connection of lsp and acp is a leaf: framing and correlation know nothing of either protocol"},
	{pkg: "internal/lsp", deny: []string{"internal/agent/trace"}, why: "the language server reads runs through the engine (agent.History), never the trace store"},
	{pkg: "internal/acp", deny: []string{"internal/agent/trace"}, why: "the ACP agent reads runs through the engine (agent.History), never the trace store"},
	{pkg: "cmd/ioh-lsp", deny: []string{"internal/agent/trace"}, why: "the commands read runs through the engine (agent.History, agent.OpenHistory), never the trace store"},
}

// checkSubRule returns the forbidden edges of package p under r.
func checkSubRule(r subRule, p pkgInfo) []string {
	if !under(p.ImportPath, module+"/"+r.pkg) {
		return nil
	}
	var bad []string
	for _, imp := range p.Imports {
		if !under(imp, module) || imp == module {
			continue
		}
		rel := strings.TrimPrefix(imp, module+"/")
		if underAny(rel, r.deny) {
			bad = append(bad, imp)
			continue
		}
		if r.only != nil && !under(imp, module+"/"+r.pkg) && !underAny(rel, r.only) {
			bad = append(bad, imp)
		}
	}
	return bad
}

func underAny(rel string, paths []string) bool {
	for _, p := range paths {
		if under(rel, p) {
			return true
		}
	}
	return false
}

func TestSubLayers(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range subRules {
		matched := false
		for _, p := range pkgs {
			if !under(p.ImportPath, module+"/"+r.pkg) {
				continue
			}
			matched = true
			for _, imp := range checkSubRule(r, p) {
				t.Errorf("forbidden import edge: %s imports %s (%s)", p.ImportPath, imp, r.why)
			}
		}
		if !matched {
			t.Errorf("sub-layer rule for %s matches no package; the package moved or the rule is stale", r.pkg)
		}
	}
}

// TestSubRuleCatchesAnEdge makes sure the rule itself can fail.
func TestSubRuleCatchesAnEdge(t *testing.T) {
	p := pkgInfo{ImportPath: module + "/internal/agent/event", Imports: []string{"fmt", module + "/internal/agent/trace", module + "/internal/agent/event/inner"}}
	if got := checkSubRule(subRule{pkg: "internal/agent/event", only: []string{}}, p); len(got) != 1 || got[0] != module+"/internal/agent/trace" {
		t.Fatalf("a leaf importing the store: got %v, want the one edge to internal/agent/trace", got)
	}
	if got := checkSubRule(subRule{pkg: "internal/lsp", deny: []string{"internal/agent/trace"}}, pkgInfo{ImportPath: module + "/internal/lsp", Imports: []string{module + "/internal/agent/trace"}}); len(got) != 1 {
		t.Fatalf("a denied edge: got %v, want it reported", got)
	}
	if got := checkSubRule(subRule{pkg: "internal/sandbox", deny: []string{"internal/sandbox/policy"}}, pkgInfo{ImportPath: module + "/internal/sandbox", Imports: []string{module + "/internal/sandbox/policy", module + "/internal/sandbox/internal/view"}}); len(got) != 1 {
		t.Fatalf("a denied edge into the package's own subtree: got %v, want the one edge to the policy", got)
	}
	if got := checkSubRule(subRule{pkg: "internal/lsp", deny: []string{"internal/agent/trace"}}, pkgInfo{ImportPath: module + "/internal/lspx", Imports: []string{module + "/internal/agent/trace"}}); len(got) != 0 {
		t.Fatalf("a package beside the rule's (lspx is not under lsp): got %v, want nothing", got)
	}
}
