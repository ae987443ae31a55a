// Package lsptest is the fake editor of the lsp tests: Start runs a real
// server on an in-memory pipe and connects an lspclient.Editor to it for
// the length of the test. The editor itself (documents, commands, hooks,
// expectations) lives in lsp/lspclient, which the shipped binary's demo
// uses too; this package imports testing and stays out of the binary
// (internal/archtest checks it).
package lsptest

import (
	"context"
	"net"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/lspclient"
)

// The editor's types, under the names the tests use.
type (
	Editor      = lspclient.Editor
	Config      = lspclient.Config
	Hooks       = lspclient.Hooks
	State       = lspclient.State
	Progress    = lspclient.Progress
	Expectation = lspclient.Expectation
)

// The editor's functions, under the names the tests use.
var (
	Connect           = lspclient.Connect
	FullCapabilities  = lspclient.FullCapabilities
	PlainCapabilities = lspclient.PlainCapabilities
	FindAction        = lspclient.FindAction
	ProgressEnded     = lspclient.ProgressEnded
	ProgressEnd       = lspclient.ProgressEnd
	LogContains       = lspclient.LogContains
)

// Start runs srv on one end of an in-memory pipe and connects an editor
// to the other. The server and connection end with the test.
func Start(t testing.TB, srv *lsp.Server, cfg Config) *Editor {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, a) }()
	e, err := lspclient.Connect(ctx, b, cfg)
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
