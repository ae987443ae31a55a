package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/suite"
)

// Options say what to run and where.
type Options struct {
	Suite    *suite.Suite
	Variants []string // names; all of the suite's when empty
	Repeat   int
	Parallel int
	// Out is the output directory: results.jsonl, the traces (state/),
	// the variants' configurations and the cells' logs.
	Out   string
	Shard Shard
	// Getenv reads the environment (default os.Getenv); the cells'
	// IOH_STATE_DIR (and a variant's XDG_CONFIG_HOME) are replaced.
	Getenv func(string) string
	// Progress gets one line per finished cell (nil: none).
	Progress io.Writer
	// Keep keeps each cell's workspace copy under Out/work.
	Keep bool
}

// Summary says what Run did.
type Summary struct {
	Planned int // cells in the shard
	Done    int // already in the results file, not run again
	Ran     int
	Results string // the results file
}

// Run runs the shard's cells that the results file does not hold yet.
// A cell the context interrupted is not written, so the next Run starts
// it again; every finished one is a line of Out/results.jsonl.
func Run(ctx context.Context, o Options) (Summary, error) {
	if o.Repeat < 1 {
		o.Repeat = 1
	}
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Shard.Count < 1 {
		o.Shard = All
	}
	variants, err := Select(o.Suite, o.Variants)
	if err != nil {
		return Summary{}, err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Summary{}, fmt.Errorf("output directory: %w", err)
	}
	if out, err = filepath.EvalSymlinks(out); err != nil {
		return Summary{}, err
	}
	sum := Summary{Results: filepath.Join(out, result.FileName)}
	done, torn, err := result.Read(sum.Results)
	if err != nil {
		return sum, err
	}
	finished := map[result.Key]bool{}
	for _, c := range done {
		finished[c.Key()] = true
	}
	var todo []result.Key
	for i, k := range Plan(o.Suite, variants, o.Repeat) {
		if !o.Shard.Has(i) {
			continue
		}
		sum.Planned++
		if finished[k] {
			sum.Done++
			continue
		}
		todo = append(todo, k)
	}
	if len(todo) == 0 {
		return sum, nil
	}
	w, err := result.Append(sum.Results, torn)
	if err != nil {
		return sum, err
	}
	defer w.Close()
	env, err := prepare(ctx, o, out, variants)
	if err != nil {
		return sum, err
	}
	ran, err := runAll(ctx, o, env, todo, w)
	sum.Ran = ran
	return sum, err
}

// runAll runs the cells on o.Parallel workers.
func runAll(ctx context.Context, o Options, env *world, todo []result.Key, w *result.Writer) (int, error) {
	keys := make(chan result.Key)
	var (
		mu   sync.Mutex
		ran  int
		errs []error
		wg   sync.WaitGroup
	)
	for range min(o.Parallel, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				c := env.cell(ctx, k)
				if ctx.Err() != nil {
					continue // interrupted: the next run starts it again
				}
				err := w.Add(c)
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("write the result of %s: %w", k, err))
				} else {
					ran++
					if o.Progress != nil {
						fmt.Fprintln(o.Progress, progressLine(c))
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, k := range todo {
		select {
		case keys <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(keys)
	wg.Wait()
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("interrupted after %d cells: run the same command again to continue: %w", ran, ctx.Err()))
	}
	return ran, errors.Join(errs...)
}

func progressLine(c result.Cell) string {
	v := "not verified"
	if c.Verified {
		v = "verified"
	}
	line := fmt.Sprintf("%s: %s, %s, %d steps, %d tokens, $%.4f, %s", c.Key(), c.Outcome, v, c.Steps, c.Tokens.Total, c.CostUSD, (time.Duration(c.WallMS) * time.Millisecond).String())
	if c.Error != "" {
		line += " (" + c.Error + ")"
	}
	return line
}
