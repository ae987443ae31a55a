package lsptest

import (
	"context"
	"net"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/lsp"
)

// Start runs srv on one end of an in-memory pipe and connects an editor
// to the other. The server and connection end with the test.
func Start(t testing.TB, srv *lsp.Server, cfg Config) *Editor {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, a) }()
	e, err := Connect(ctx, b, cfg)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = e.Close()
		_ = b.Close()
		<-served
	})
	return e
}
