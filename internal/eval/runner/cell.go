package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/suite"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// world is what every cell of one Run shares: the output directory, the
// tasks' workspaces (git tasks checked out once), the variants and their
// environments.
type world struct {
	out      string
	keep     bool
	tasks    map[string]suite.Task
	srcs     map[string]string // task id → workspace to copy
	variants map[string]suite.Variant
	envs     map[string]func(string) string
	// redact keeps the environment's secrets out of a cell's error text
	// (results.jsonl and the progress lines).
	redact redact.Redactor
}

func prepare(ctx context.Context, o Options, out string, variants []suite.Variant) (*world, error) {
	w := &world{out: out, keep: o.Keep, tasks: map[string]suite.Task{}, srcs: map[string]string{},
		variants: map[string]suite.Variant{}, envs: map[string]func(string) string{},
		redact: redact.New(wire.Secrets(envWith(o.Getenv, nil), os.Environ))}
	for _, t := range o.Suite.Tasks {
		src, err := suite.Checkout(ctx, t, filepath.Join(out, "repos"))
		if err != nil {
			return nil, err
		}
		w.tasks[t.ID], w.srcs[t.ID] = t, src
	}
	for _, v := range variants {
		set := map[string]string{"IOH_STATE_DIR": filepath.Join(out, "state")}
		if v.Config != "" {
			home := filepath.Join(out, "config", v.Name)
			if err := os.MkdirAll(filepath.Join(home, "ioh"), 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(home, "ioh", "config.yaml"), []byte(v.Config), 0o600); err != nil {
				return nil, err
			}
			set["XDG_CONFIG_HOME"] = home
		}
		w.variants[v.Name], w.envs[v.Name] = v, envWith(o.Getenv, set)
	}
	for _, d := range []string{"state", "work", "logs"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// cell runs one cell in a fresh copy of its task's workspace. A failure
// to start is a cell with outcome "error", never a lost cell.
func (w *world) cell(ctx context.Context, k result.Key) result.Cell {
	start := time.Now()
	c := result.Cell{Task: k.Task, Variant: k.Variant, Repeat: k.Repeat}
	err := w.run(ctx, k, &c)
	c.WallMS = time.Since(start).Milliseconds()
	if err != nil {
		c.Outcome, c.Error = "error", err.Error()
	}
	c.Error = w.redact.String(c.Error)
	return c
}

func (w *world) run(ctx context.Context, k result.Key, c *result.Cell) error {
	t, v := w.tasks[k.Task], w.variants[k.Variant]
	name := fmt.Sprintf("%s.%s.%d", k.Task, k.Variant, k.Repeat)
	ws := filepath.Join(w.out, "work", name)
	os.RemoveAll(ws) // what an interrupted attempt left
	if err := CopyTree(w.srcs[k.Task], ws); err != nil {
		return fmt.Errorf("copy the workspace: %w", err)
	}
	if !w.keep {
		defer os.RemoveAll(ws)
	}
	path := t.Contract
	if t.Inside {
		path = filepath.Join(ws, t.Contract)
	}
	ct, err := contract.Load(path)
	if err != nil {
		return err
	}
	v.Budget.Apply(ct)
	logf, err := os.Create(filepath.Join(w.out, "logs", name+".log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	sink := &counter{}
	eng, err := wire.NewHarness(ctx, wire.Options{
		Root: ws, Getenv: w.envs[k.Variant], Approver: approve.Never{}, Sink: sink,
		Logger:    slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Overrides: wire.Overrides{Provider: v.Provider, Model: v.Model, Cassette: v.CassetteFor(t)},
	})
	if err != nil {
		return err
	}
	defer eng.Close()
	run, err := eng.Harness.Start(ctx, ct)
	if err != nil {
		return err
	}
	res := run.Wait()
	fill(c, res, sink)
	if dir, err := trace.StateDir(w.envs[k.Variant]); err == nil {
		if rel, err := filepath.Rel(w.out, trace.DBPath(dir, eng.Root.Dir())); err == nil {
			c.Trace = rel
		}
	}
	return nil
}

// fill copies a run's result into its cell.
func fill(c *result.Cell, res *agent.Result, s *counter) {
	c.RunID, c.Outcome, c.Steps = res.RunID, string(res.Outcome), res.Steps
	u := res.Usage
	c.Tokens = result.Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, Total: u.Total()}
	c.CostUSD, c.Unpriced = res.CostUSD, res.Unpriced
	c.Verified = res.Report != nil && res.Report.Passed && res.Report.Proves
	s.mu.Lock()
	c.FailedEdits, c.VerifyRounds = s.failedEdits, s.verdicts
	s.mu.Unlock()
	if res.Err != nil && !c.Verified {
		c.Error = res.Err.Error()
	}
}

// counter counts what a cell's events show: failed edits (an editing
// tool's error result, sub-agents' included) and verification rounds
// (the root run's verdicts).
type counter struct {
	mu                    sync.Mutex
	failedEdits, verdicts int
}

var editTools = map[string]bool{"edit_file": true, "apply_patch": true, "write_file": true, "rename_file": true, "delete_file": true}

func (s *counter) Emit(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p := e.Payload.(type) {
	case *event.ToolResult:
		if p.IsError && editTools[p.Tool] {
			s.failedEdits++
		}
	case *event.Verdict:
		if e.Parent == "" {
			s.verdicts++
		}
	}
}

// CopyTree copies the workspace src to dst (which must not exist):
// regular files, directories and symlinks as they are. A repository's
// .git is not copied (an empty .git marks the copy's root), so a copy
// costs the work tree only.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if rel == ".git" {
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			return filepath.SkipDir
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil // sockets, devices: not part of a workspace
	})
}

func copyFile(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, info.Mode().Perm())
}
