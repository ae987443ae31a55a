package acp

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

// stdioServerEnv makes the test binary an MCP server over stdio (the
// client-passed stdio server of TestClientStdioMCPServerContained, run
// inside the sandbox).
const stdioServerEnv = "IOH_ACP_TEST_MCP_STDIO"

// TestMain lets the test binary serve as the sandbox's re-executed init
// stage (the server tests verify changes in the real sandbox) and as a
// stdio MCP server, and gives the tests a world of their own.
func TestMain(m *testing.M) {
	if sandbox.Init() {
		return
	}
	if os.Getenv(stdioServerEnv) == "1" {
		os.Exit(serveStdioCalc())
	}
	os.Exit(testenv.Main(m))
}

// serveStdioCalc serves one tool, add, over stdin and stdout.
func serveStdioCalc() int {
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two integers."}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(in.A + in.B)}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}
