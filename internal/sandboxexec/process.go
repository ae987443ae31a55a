package sandboxexec

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/policy"
)

// DefaultLifetime caps a long-lived contained process (an MCP server)
// that asks for no lifetime of its own.
const DefaultLifetime = 12 * time.Hour

// stderrKeep is how much of a long-lived process's standard error is kept
// to explain how it ended.
const stderrKeep = 8 << 10

var _ contain.Spawner = (*Adapter)(nil)

// Spawn starts req contained, with the adapter's masks, read view, tier
// requirement and limits, its stdin and stdout connected to the returned
// Process. Nothing of the workspace is writable to it; it gets a private
// /tmp and, when req.Dir is "", a private empty working directory.
func (a *Adapter) Spawn(ctx context.Context, req *contain.ProcessRequest) (*contain.Process, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, fmt.Errorf("%w: no command", ErrBadRequest)
	}
	dir, cleanup := req.Dir, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ioh-proc-")
		if err != nil {
			return nil, fmt.Errorf("spawn: working directory: %w", err)
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	} else if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%w: dir %q is not absolute", ErrBadRequest, dir)
	}
	for _, p := range req.Readable {
		if !filepath.IsAbs(p) {
			cleanup()
			return nil, fmt.Errorf("%w: readable path %q is not absolute", ErrBadRequest, p)
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("spawn: stdin pipe: %w", err)
	}
	outR, outW := io.Pipe()
	limits := a.opts.Limits
	limits.Wall = req.Lifetime
	if limits.Wall <= 0 {
		limits.Wall = DefaultLifetime
	}
	// The stream is the process's whole conversation: no output cap, or
	// the server would be killed after its first megabyte of answers. The
	// client bounds each message it reads instead.
	limits.Output = 1 << 62
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	stderr := &tail{max: stderrKeep}
	var (
		mu  sync.Mutex
		res *contain.Result
		rer error
	)
	readable := append(append(append([]string{}, a.opts.Readable...), req.Readable...), dir)
	env := append(append([]string{}, a.opts.Env...), req.Env...)
	go func() {
		defer close(done)
		defer cleanup()
		out, err := a.runner.Run(pctx, &sandbox.Spec{
			Argv: req.Argv, Dir: dir, Env: env, Writable: nil,
			Network: req.Network, NetProxy: specProxy(req.NetProxy), Limits: limits,
			View: a.view(env, readable), Backend: a.opts.Backend, Require: a.opts.Require,
			Stdin: inR, Stdout: outW, Stderr: stderr,
		})
		inR.Close()
		r := &contain.Result{Output: stderr.bytes()}
		if out != nil {
			r.ExitCode, r.Signal, r.CapHit, r.Backend, r.Downgrade, r.Duration = out.ExitCode, out.Signal, out.CapHit, out.Backend, out.Downgrade, out.Duration
			for _, m := range out.Mechanisms {
				r.Mechanisms = append(r.Mechanisms, contain.Mechanism{Name: m.Name, State: m.State, Detail: m.Detail})
			}
		}
		mu.Lock()
		res, rer = r, err
		if out == nil && err != nil {
			res = nil
		}
		mu.Unlock()
		outW.CloseWithError(io.EOF)
	}()
	var once sync.Once
	closeFn := func() error {
		once.Do(func() {
			inW.Close() // a well-behaved server exits on EOF
			t := time.NewTimer(2 * time.Second)
			defer t.Stop()
			select {
			case <-done:
			case <-t.C:
			}
			cancel() // kills the whole contained tree
			<-done
			outR.Close()
		})
		return nil
	}
	return &contain.Process{
		Stdin: inW, Stdout: outR, Done: done,
		Result: func() (*contain.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			return res, rer
		},
		Close: closeFn,
	}, nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.b...)
}

// view is the product's view (policy.Default) of a run with the extra
// environment env: the toolchains it names, the configuration's readable
// paths and readable, the configuration's masks. Built per run, so a
// secret made since the last run is masked in this one (the cache keeps
// only what is unchanged).
func (a *Adapter) view(env, readable []string) sandbox.View {
	return policy.Default(policy.Options{Env: env, Readable: readable, Masked: a.opts.Masked, Cache: a.views})
}
