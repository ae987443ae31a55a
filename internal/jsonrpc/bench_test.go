package jsonrpc_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

// The benchmarks push messages through a connection over two OS pipes,
// ours with each framer and go.lsp.dev/jsonrpc2 (what the language server
// used before) with the same framing, so that bench/jsonrpc.sh can print
// messages per second as ratios measured in the same run.

// rwc joins a pipe's read end and another's write end.
type rwc struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (c rwc) Close() error {
	for _, cl := range c.closers {
		cl.Close()
	}
	return nil
}

// pipes returns the two ends of a duplex stream over OS pipes.
func pipes(b *testing.B) (a, z rwc) {
	r1, w1, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	all := []io.Closer{r1, w1, r2, w2}
	b.Cleanup(func() {
		for _, c := range all {
			c.Close()
		}
	})
	return rwc{r1, w2, []io.Closer{r1, w2}}, rwc{r2, w1, []io.Closer{r2, w1}}
}

// benchConn is one side of a benchmark: send a notification, make a call.
type benchConn struct {
	notify func(method string, params any) error
	call   func(ctx context.Context, method string, params, result any) error
}

// ours starts a server (counting notifications, answering calls) and
// returns the client side, both jsonrpc.Conn over framer f.
func ours(b *testing.B, f framing, seen *atomic.Int64) benchConn {
	a, z := pipes(b)
	log := slog.New(slog.DiscardHandler)
	srv := jsonrpc.NewConn(f.new(a, a, 1<<20), jsonrpc.Options{Logger: log})
	cli := jsonrpc.NewConn(f.new(z, z, 1<<20), jsonrpc.Options{Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go srv.Serve(ctx, func(_ context.Context, req *jsonrpc.Request) (any, error) {
		if !req.IsCall() {
			seen.Add(1)
			return nil, nil
		}
		return req.Params, nil
	})
	go cli.Serve(ctx, func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil })
	return benchConn{notify: cli.Notify, call: cli.Call}
}

// reference is the same over go.lsp.dev/jsonrpc2 (requests released
// with Async, as the server did).
func reference(b *testing.B, f framing, seen *atomic.Int64) benchConn {
	a, z := pipes(b)
	stream := jsonrpc2.NewHeaderStream
	if f.name == "line" {
		stream = jsonrpc2.NewNDJSONStream
	}
	srv := jsonrpc2.NewConn(stream(a))
	cli := jsonrpc2.NewConn(stream(z))
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	srv.Go(ctx, func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if !req.IsCall() {
			seen.Add(1)
			return nil, nil
		}
		jsonrpc2.Async(ctx)
		return jsonrpc2.RawMessage(req.Params()), nil
	})
	cli.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	return benchConn{
		notify: func(method string, params any) error { return cli.Notify(ctx, method, params) },
		call: func(ctx context.Context, method string, params, result any) error {
			_, err := cli.Call(ctx, method, params, result)
			return err
		},
	}
}

var impls = []struct {
	name  string
	start func(*testing.B, framing, *atomic.Int64) benchConn
}{{"ours", ours}, {"jsonrpc2", reference}}

type note struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
	Text    string `json:"text"`
}

// BenchmarkNotify: one op is one notification from the client handled
// by the server (a didChange-sized message), in order.
func BenchmarkNotify(b *testing.B) {
	for _, f := range framings {
		for _, im := range impls {
			b.Run(f.name+"/"+im.name, func(b *testing.B) {
				var seen atomic.Int64
				c := im.start(b, f, &seen)
				p := note{URI: "file:///w/a.go", Text: "package a\n\nfunc A() {}\n"}
				b.ResetTimer()
				for i := range b.N {
					p.Version = i
					if err := c.notify("textDocument/didChange", p); err != nil {
						b.Fatal(err)
					}
				}
				var res int
				if err := c.call(context.Background(), "sync", 0, &res); err != nil {
					b.Fatal(err)
				}
				if seen.Load() != int64(b.N) {
					b.Fatalf("handled %d of %d notifications", seen.Load(), b.N)
				}
			})
		}
	}
}

// BenchmarkCall: one op is one request answered, one at a time.
func BenchmarkCall(b *testing.B) {
	for _, f := range framings {
		for _, im := range impls {
			b.Run(f.name+"/"+im.name, func(b *testing.B) {
				var seen atomic.Int64
				c := im.start(b, f, &seen)
				ctx := context.Background()
				b.ResetTimer()
				for i := range b.N {
					var res int
					if err := c.call(ctx, "echo", i, &res); err != nil || res != i {
						b.Fatalf("echo %d: %d %v", i, res, err)
					}
				}
			})
		}
	}
}
