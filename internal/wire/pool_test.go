package wire

import (
	"context"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
)

// TestEnginePools: an engine that built its own sandbox runs through a
// pool of its own unless it is given one; two engines given the same
// pool (the language server's folders) share it.
func TestEnginePools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	own := func(o Options) *Engine {
		t.Helper()
		eng, err := NewHarness(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Close)
		return eng
	}
	a, b := own(Options{Root: t.TempDir()}), own(Options{Root: t.TempDir()})
	if a.Pool == nil || b.Pool == nil || a.Pool == b.Pool {
		t.Fatalf("engines without Options.Pool: pools %p and %p, want two of their own", a.Pool, b.Pool)
	}
	shared := sandbox.NewPool()
	defer shared.Close()
	c, d := own(Options{Root: t.TempDir(), Pool: shared}), own(Options{Root: t.TempDir(), Pool: shared})
	if c.Pool != shared || d.Pool != shared {
		t.Fatalf("engines given a pool run through %p and %p, want %p", c.Pool, d.Pool, shared)
	}
}
