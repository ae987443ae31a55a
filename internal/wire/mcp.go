package wire

import (
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
)

var _ agent.ToolSource = (*mcptool.Manager)(nil)

// ACPSource labels MCP servers an ACP client passed.
const ACPSource = "acp client"

// newMCP builds the MCP servers' manager from the configuration's
// servers and those an ACP client passed (which replace configured ones
// of the same name); nil when there are none. Stdio servers run in sb
// when it can host long-lived processes (contain.Spawner); otherwise they
// are refused, never run uncontained.
func newMCP(cfg *config.Config, o Options, sb contain.Sandbox) (*mcptool.Manager, error) {
	var servers []mcptool.Server
	for _, s := range cfg.MCP {
		// The config's entry is the manager's type field for field (a
		// conversion: the compiler keeps the two the same).
		servers = append(servers, mcptool.Server(s))
	}
	if len(o.MCPServers) > 0 && !cfg.WorkspaceTrusted {
		// An ACP client's servers are its editor settings, which may
		// come from the project (as VS Code's and Zed's do): like the
		// editor layer's, they start only in a trusted workspace.
		names := make([]string, len(o.MCPServers))
		for i, s := range o.MCPServers {
			names[i] = s.Name
		}
		o.Logger.Warn(fmt.Sprintf("%s: mcp servers %s ignored: the client's MCP servers may come from the project's settings and the workspace %s is not trusted; list them under mcp.servers in the user config %s, or list the workspace under `trusted:` there.",
			ACPSource, strings.Join(names, ", "), cfg.WorkspaceRoot, config.UserPath(o.Getenv)))
		o.MCPServers = nil
	}
	for _, s := range o.MCPServers {
		if s.Source == "" {
			s.Source = ACPSource
		}
		replaced := false
		for i := range servers {
			if servers[i].Name == s.Name {
				servers[i], replaced = s, true
			}
		}
		if !replaced {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		return nil, nil
	}
	sp, _ := sb.(contain.Spawner)
	m, err := mcptool.NewManager(servers, mcptool.Options{Spawner: sp, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("configure mcp servers: %w", err)
	}
	return m, nil
}

// toolSource is m as the harness's ToolSource: nil (not a nil pointer in
// an interface) when there is no manager.
func toolSource(m *mcptool.Manager) agent.ToolSource {
	if m == nil {
		return nil
	}
	return m
}
