package wire

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
)

// The per-call cost of a stdio MCP tool call the agent's way (acts judged
// by the policy, the call to server-everything contained in the sandbox)
// against the same call to the same server run directly. bench/mcp.sh
// runs both in one process and prints the ratio.

func BenchmarkMCPCallDirect(b *testing.B) {
	dir, everything := mcpDir(b)
	cmd := exec.Command("node", everything, "stdio")
	cmd.Dir = dir
	ctx := context.Background()
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	args := map[string]any{"message": "ping"}
	b.ResetTimer()
	for b.Loop() {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

func BenchmarkMCPCallContained(b *testing.B) {
	dir, everything := mcpDir(b)
	ad, err := sandboxexec.New(sandboxexec.Options{Require: "landlock"})
	if err != nil {
		b.Fatal(err)
	}
	m, err := mcptool.NewManager([]mcptool.Server{{Name: "everything", Command: []string{"node", everything, "stdio"}, Dir: dir, Tools: []string{"echo"}}},
		mcptool.Options{Spawner: ad})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	pol, err := policy.New(policy.Builtin(nil), policy.LayerRules{Layer: policy.LayerUser, Rules: []policy.Rule{{Act: policy.ActMCP, Effect: policy.Allow, Pattern: "everything/*"}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ts, warnings := m.Tools(ctx, pol.Check)
	if len(ts) != 1 {
		b.Fatalf("tools %d, warnings %q", len(ts), warnings)
	}
	echo := ts[0]
	args := json.RawMessage(`{"message":"ping"}`)
	b.ResetTimer()
	for b.Loop() {
		acts, err := echo.Acts(args)
		if err != nil {
			b.Fatal(err)
		}
		for _, a := range acts {
			if v := pol.Check(a.Act, a.Target); v.Effect != policy.Allow {
				b.Fatalf("%s %s: %s", a.Act, a.Target, v.Effect)
			}
		}
		res, err := echo.Call(ctx, args)
		if err != nil || res.IsError || !strings.Contains(res.Content, "ping") {
			b.Fatal(res, err)
		}
	}
}
