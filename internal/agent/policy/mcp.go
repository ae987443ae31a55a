package policy

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ActMCP is a call of an MCP server's tool
// (docs/policy.md#mcp-servertool). Its target is "server/tool"; a rule's
// pattern is a glob over that ("docs/*", "github/create_*", "*/*"). With
// no rule it asks.
const ActMCP Act = "mcp"

// MCPTarget is the target of a call of tool on server: the one spelling
// the policy, the approver and the trace all see.
func MCPTarget(server, tool string) string { return server + "/" + tool }

// mcpMatcher is a glob over "server/tool": "*" stays within one side of
// the slash, so "docs/*" matches every tool of docs and nothing else.
type mcpMatcher struct{ glob, lower string }

func compileMCP(p string) (matcher, error) {
	server, tool, ok := strings.Cut(p, "/")
	if !ok || server == "" || tool == "" || strings.Contains(tool, "/") {
		return nil, fmt.Errorf("%w: mcp pattern %q must be server/tool (globs allowed on each side)", ErrInvalidRule, p)
	}
	if !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("%w: bad glob %q", ErrInvalidRule, p)
	}
	return mcpMatcher{glob: p, lower: strings.ToLower(p)}, nil
}

// match: the loose reading (deny and ask rules) ignores case, so a deny
// on "github/delete_*" also catches a server that spells it Delete_Repo.
func (m mcpMatcher) match(t *target, loose bool) bool {
	if t.mcp == "" {
		return false
	}
	if ok, _ := doublestar.Match(m.glob, t.mcp); ok {
		return true
	}
	if !loose {
		return false
	}
	ok, _ := doublestar.Match(m.lower, strings.ToLower(t.mcp))
	return ok
}
