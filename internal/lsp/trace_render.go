package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/render"
	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// traceSummary is ioh.trace's result (declared in lsp/api).
type traceSummary = api.TraceSummary

// commandTrace returns the run's trace summary, writes the rendered
// markdown trace and opens it with window/showDocument when supported.
func (s *Server) commandTrace(ctx context.Context, a api.RunRef) (traceSummary, error) {
	st, ok := s.runs.lookup(a.RunID)
	if !ok {
		// A run from before this session: read it from the trace store.
		stored, err := s.storedRun(ctx, a.RunID)
		if err != nil {
			return traceSummary{}, err
		}
		st = stored
	}
	sum := traceSummary{RunInfo: infoOf(st), Events: len(st.events), Types: map[string]int{}}
	for _, e := range st.events {
		sum.Types[e.Type]++
	}
	if st.result != nil {
		sum.Summary = st.result.Summary
	}
	file, err := s.writeState(st.id+".trace.md", renderTrace(st))
	if err != nil {
		return traceSummary{}, err
	}
	sum.File = file
	if err := s.open(ctx, file); err != nil {
		return traceSummary{}, err
	}
	return sum, nil
}

// commandShowDiff shows a run's pending (or last proposed) change.
func (s *Server) commandShowDiff(ctx context.Context, a api.RunRef) (api.Diff, error) {
	diff, err := s.showDiff(ctx, a.RunID)
	if err != nil {
		return api.Diff{}, err
	}
	return api.Diff{RunID: a.RunID, Diff: diff}, nil
}

// showDiff writes the run's diff to a file and opens it.
func (s *Server) showDiff(ctx context.Context, id string) (string, error) {
	st, ok := s.runs.lookup(id)
	if !ok {
		return "", invalidParams("no run %q in this session", id)
	}
	var diff string
	switch {
	case st.proposal != nil && st.proposal.Changes != nil:
		diff = st.proposal.Changes.Diff()
	case st.result != nil && st.result.Changes != nil:
		diff = st.result.Changes.Diff()
	default:
		return "", invalidParams("run %s has no proposed change", id)
	}
	file, err := s.writeState(id+".diff", []byte(diff))
	if err != nil {
		return "", err
	}
	if err := s.open(ctx, file); err != nil {
		return "", err
	}
	return diff, nil
}

// open asks the client to show a file when it can.
func (s *Server) open(ctx context.Context, file string) error {
	s.mu.Lock()
	can := s.caps.showDocument
	s.mu.Unlock()
	if !can {
		return nil
	}
	_, err := s.client.ShowDocument(ctx, &protocol.ShowDocumentParams{URI: uri.File(file), TakeFocus: ptr(true)})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		s.log.Warn("window/showDocument", "file", file, "err", err)
	}
	return nil
}

// writeState writes name under the state directory, atomically.
func (s *Server) writeState(name string, data []byte) (string, error) {
	dir := s.opts.StateDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ioh-lsp-"+fmt.Sprint(os.Getuid()))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	f, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(f.Name(), final); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return final, nil
}

// renderTrace renders a readable markdown trace: one section per step,
// each event a line with its fields.
func renderTrace(st runState) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# ioh run %s\n\n", st.id)
	fmt.Fprintf(&b, "- goal: %s\n- outcome: **%s**\n- steps: %d\n- tokens: %d\n- cost: $%.4f\n- started: %s\n\n",
		oneLine(st.goal, 200), st.outcome, st.steps, st.tokens, st.cost, st.started.UTC().Format("2006-01-02 15:04:05Z"))
	b.WriteString(render.Markdown(st.events))
	if st.result != nil {
		if st.result.Summary != "" {
			fmt.Fprintf(&b, "\n## summary\n\n%s\n", st.result.Summary)
		}
		if st.result.Report != nil {
			b.WriteString("\n## verification\n\n")
			for _, c := range st.result.Report.Checks {
				mark := "FAIL"
				if c.Passed {
					mark = "pass"
				}
				fmt.Fprintf(&b, "- %s `%s` (%s, exit %d, %s, backend %s)\n", mark, c.Name, c.Phase, c.ExitCode, c.Duration, c.Backend)
				fmt.Fprintf(&b, "  - evidence: %s\n", c.Describe())
			}
			for _, why := range st.result.Report.TouchesChecks {
				fmt.Fprintf(&b, "- **touches its own checks**: %s\n", why)
			}
		}
		if st.result.Changes != nil {
			fmt.Fprintf(&b, "\n## change\n\n```diff\n%s```\n", st.result.Changes.Diff())
		}
	}
	return []byte(b.String())
}

// storedRun reads a run recorded before this session from the trace store
// of an open folder.
func (s *Server) storedRun(ctx context.Context, id string) (runState, error) {
	for _, folder := range s.folderPaths() {
		eng, err := s.engine(ctx, folder)
		if err != nil || eng.history() == nil {
			continue
		}
		r, err := eng.history().Run(ctx, id)
		if err != nil {
			continue
		}
		events, err := eng.history().Events(ctx, id)
		if err != nil {
			return runState{}, fmt.Errorf("read trace of %s: %w", id, err)
		}
		return runState{
			id: r.RunID, goal: r.Goal, folder: folder, started: r.Started,
			outcome: r.Outcome, steps: r.Steps,
			tokens: r.Usage.InputTokens + r.Usage.OutputTokens, cost: r.CostUSD, events: events,
		}, nil
	}
	return runState{}, invalidParams("%s: no run %q in this session or the trace stores of the open folders", cmdTrace, id)
}
