package agent

import (
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// TestTreeKeepsWrittenCaps: the caps are the parser's, defaults included;
// the tree does not default them again. A contract that writes
// max_depth: 0 gets no sub-agents (the tree used to read the 0 as "unset"
// and allow depth 2); the controls show a contract that omits it, and one
// built in code with no caps, get the default depth.
func TestTreeKeepsWrittenCaps(t *testing.T) {
	parse := func(src string) contract.Agents {
		t.Helper()
		c, err := contract.Parse([]byte(src), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return c.Agents
	}
	if err := newTree(parse("goal: g\nagents: {max_depth: 0}\n")).admit(1); err == nil {
		t.Error("max_depth 0: a sub-agent was admitted")
	}
	for name, caps := range map[string]contract.Agents{
		"omitted":       parse("goal: g\n"),
		"built in code": {},
	} {
		tr := newTree(caps)
		if err := tr.admit(contract.DefaultMaxDepth); err != nil {
			t.Errorf("%s: depth %d refused: %v", name, contract.DefaultMaxDepth, err)
		}
		if err := tr.admit(contract.DefaultMaxDepth + 1); err == nil {
			t.Errorf("%s: depth %d admitted", name, contract.DefaultMaxDepth+1)
		}
	}
}
