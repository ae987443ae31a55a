package wire

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
)

// TestClientMCPServersNeedATrustedWorkspace: the MCP servers an ACP
// client passes in session/new are editor settings, which may come from
// the project's own settings; in a workspace the user config does not
// trust they are not started, and the log says so with the fix. The
// control: trusted, the same server is managed.
func TestClientMCPServersNeedATrustedWorkspace(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": "/home/u/.config"}
	servers := []mcptool.Server{{Name: "calc", URL: "http://127.0.0.1:1/mcp", Tools: []string{"*"}}}
	for _, trusted := range []bool{false, true} {
		var logs bytes.Buffer
		cfg := &config.Config{WorkspaceRoot: "/src/p", WorkspaceTrusted: trusted}
		o := Options{MCPServers: servers, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Getenv: func(k string) string { return env[k] }}
		m, err := newMCP(cfg, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		if trusted {
			if m == nil {
				t.Error("trusted workspace: the client's server is not managed")
			} else {
				m.Close()
			}
			continue
		}
		if m != nil {
			m.Close()
			t.Error("untrusted workspace: the client's server is managed")
		}
		for _, want := range []string{"mcp servers calc ignored", "the workspace /src/p is not trusted", "/home/u/.config/ioh/config.yaml", "`trusted:`"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, logs.String())
			}
		}
	}
}
