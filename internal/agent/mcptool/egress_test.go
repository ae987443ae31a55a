package mcptool

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// pipeSpawner serves an in-process MCP server over pipes as the
// "contained" process, records the requests, and offers a proxy whose
// judge the test asks directly.
type pipeSpawner struct {
	mu     sync.Mutex
	reqs   []contain.ProcessRequest
	judges []contain.NetJudge
	closed int
}

func (s *pipeSpawner) Spawn(ctx context.Context, req *contain.ProcessRequest) (*contain.Process, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, *req)
	s.mu.Unlock()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fetch", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "get", Description: "Fetch a URL."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Run(sctx, &mcp.IOTransport{Reader: inR, Writer: outW})
		outW.Close()
	}()
	return &contain.Process{Stdin: inW, Stdout: outR, Done: done,
		Result: func() (*contain.Result, error) { return &contain.Result{}, nil },
		Close:  func() error { cancel(); inW.Close(); <-done; return nil }}, nil
}

type spawnerWithEgress struct{ *pipeSpawner }

func (s spawnerWithEgress) Egress(j contain.NetJudge) contain.Egress {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.judges = append(s.judges, j)
	return fakeEgress{s.pipeSpawner}
}

type fakeEgress struct{ s *pipeSpawner }

func (fakeEgress) Proxy(context.Context) (*contain.NetProxy, error) {
	return &contain.NetProxy{Socket: "/tmp/p.sock", TCP: "127.0.0.1:1"}, nil
}
func (e fakeEgress) Close() error { e.s.mu.Lock(); e.s.closed++; e.s.mu.Unlock(); return nil }

// A stdio server whose entry lists hosts gets a proxy that reaches
// exactly those, not the whole network; the proxy ends with the server.
// The control: a sandbox without proxies gives it the network as before.
func TestStdioServerNetworkThroughAProxy(t *testing.T) {
	for _, withEgress := range []bool{true, false} {
		ps := &pipeSpawner{}
		var sp contain.Spawner = ps
		if withEgress {
			sp = spawnerWithEgress{ps}
		}
		srv := []Server{{Name: "fetch", Command: []string{"fetch-server"}, Network: []string{"api.example.com:443", "127.0.0.1:8080"}, Tools: []string{"get"}}}
		m, err := NewManager(srv, Options{Spawner: sp})
		if err != nil {
			t.Fatal(err)
		}
		allow := judge(t, policy.Rule{Act: policy.ActNet, Effect: policy.Allow, Pattern: "*"})
		ts, warnings := m.Tools(context.Background(), allow)
		if len(ts) != 1 {
			t.Fatalf("egress %v: tools %d, warnings %q", withEgress, len(ts), warnings)
		}
		req := ps.reqs[0]
		if !withEgress {
			if !req.Network || req.NetProxy != nil {
				t.Errorf("control: %+v, want the network as before", req)
			}
			m.Close()
			continue
		}
		if req.Network || req.NetProxy == nil {
			t.Fatalf("the server got %+v, want only a proxy", req)
		}
		j := ps.judges[0]
		for _, c := range []struct {
			host  string
			port  int
			allow bool
		}{{"api.example.com", 443, true}, {"api.example.com", 80, false}, {"127.0.0.1", 8080, true}, {"evil.example", 443, false}} {
			if v := j.Judge(context.Background(), c.host, c.port); v.Allow != c.allow {
				t.Errorf("%s:%d: %+v", c.host, c.port, v)
			}
		}
		m.Close()
		if ps.closed != 1 {
			t.Errorf("the proxy was closed %d times with the server", ps.closed)
		}
	}
}
