package acp

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestClientMCPServerNeedsATrustedWorkspace: the MCP servers a client
// passes in session/new are editor settings, which a client may take
// from the project's own settings; in a cwd the user config does not
// trust, the server is not started, so the model's call to its tool asks
// nothing and runs nothing. The control, the same session in a trusted
// cwd, is TestClientMCPServerIsWired (mcpWorld trusts its workspace).
func TestClientMCPServerNeedsATrustedWorkspace(t *testing.T) {
	endpoint, host, calls := calcServer(t)
	ws, task, cassette := mcpWorld(t, host)
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "ioh", "config.yaml")
	if err := os.WriteFile(cfg, []byte("policy:\n  rules:\n    - {act: net, effect: allow, pattern: \""+host+"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	c := newClient(t, cassette, func(p map[string]any) any {
		mu.Lock()
		asked = append(asked, p["toolCall"].(map[string]any)["title"].(string))
		mu.Unlock()
		return selected(optAllowOnce)
	})
	c.call(methodInitialize, map[string]any{"protocolVersion": 1})
	servers := []any{map[string]any{"type": "http", "name": "calc", "url": endpoint, "headers": []any{}}}
	r := c.call(methodSessionNew, map[string]any{"cwd": ws, "mcpServers": servers})
	sid := r["result"].(map[string]any)["sessionId"].(string)
	c.call(methodSessionPrompt, taskPrompt(sid, task))
	mu.Lock()
	defer mu.Unlock()
	for _, a := range asked {
		if strings.Contains(a, "calc") {
			t.Errorf("asked %q: the untrusted workspace's client server was started", a)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the server ran add %d times", n)
	}
}
