package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/regfile"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
)

// The run's trace shows as diagnostics with source `ioh` (docs/lsp.md#diagnostics):
// Information at each edited range, Error at each location of a failing
// check, Warning `policy-denied` at a denied act, and an Information on
// each file of a proposal held for review. They are grouped by run and
// kind, so ioh.clearTrace (or dropping the run) removes exactly its own.

const (
	diagSource     = "ioh"
	codePolicyDeny = "policy-denied"
	kindEdit       = "edit"
	kindCheck      = "check"
	kindPolicy     = "policy"
	kindHeld       = "held"
	// kindBudget marks the task file of a run its budget stopped, with a
	// "Continue with a larger budget" quick fix (budget.go).
	kindBudget       = "budget"
	codeBudgetExceed = "budget-exceeded"
	// kindRefused marks the task-file line of a run that could not start
	// (refused.go).
	kindRefused    = "refused"
	codeRunRefused = "run-refused"
	// kindIgnored marks the task-file line of a setting a started run's
	// preparation ignored (ignored.go).
	kindIgnored        = "ignored"
	codeSettingIgnored = "setting-ignored"
)

// diagData travels in Diagnostic.Data so code actions find the run.
type diagData struct {
	RunID  string `json:"runId"`
	Kind   string `json:"kind"`
	Act    string `json:"act,omitempty"`
	Target string `json:"target,omitempty"`
}

type diagEntry struct {
	path string // absolute
	diag protocol.Diagnostic
}

type diagnostics struct {
	mu    sync.Mutex
	byRun map[string]map[string][]diagEntry // run → kind → entries
}

func newDiagnostics() *diagnostics {
	return &diagnostics{byRun: map[string]map[string][]diagEntry{}}
}

// setDiags replaces the run's diagnostics of one kind and republishes
// every file that gained or lost one.
func (s *Server) setDiags(run, kind string, entries []diagEntry) {
	d := s.diags
	d.mu.Lock()
	touched := map[string]bool{}
	if kinds, ok := d.byRun[run]; ok {
		for _, e := range kinds[kind] {
			touched[e.path] = true
		}
	}
	if len(entries) > 0 {
		if d.byRun[run] == nil {
			d.byRun[run] = map[string][]diagEntry{}
		}
		d.byRun[run][kind] = entries
	} else if d.byRun[run] != nil {
		delete(d.byRun[run], kind)
	}
	for _, e := range entries {
		touched[e.path] = true
	}
	d.mu.Unlock()
	s.publish(touched)
}

// addDiag appends one diagnostic of a kind.
func (s *Server) addDiag(run, kind string, e diagEntry) {
	d := s.diags
	d.mu.Lock()
	if d.byRun[run] == nil {
		d.byRun[run] = map[string][]diagEntry{}
	}
	d.byRun[run][kind] = append(d.byRun[run][kind], e)
	d.mu.Unlock()
	s.publish(map[string]bool{e.path: true})
}

// clearRun removes every diagnostic of a run ("" for all runs).
func (s *Server) clearRun(run string) {
	d := s.diags
	d.mu.Lock()
	touched := map[string]bool{}
	for r, kinds := range d.byRun {
		if run != "" && r != run {
			continue
		}
		for _, es := range kinds {
			for _, e := range es {
				touched[e.path] = true
			}
		}
		delete(d.byRun, r)
	}
	d.mu.Unlock()
	s.publish(touched)
}

// publish sends the current union of diagnostics for each path.
func (s *Server) publish(paths map[string]bool) {
	if len(paths) == 0 {
		return
	}
	d := s.diags
	d.mu.Lock()
	type pub struct {
		path  string
		diags []protocol.Diagnostic
	}
	var pubs []pub
	runs := make([]string, 0, len(d.byRun))
	for r := range d.byRun {
		runs = append(runs, r)
	}
	sort.Strings(runs)
	for p := range paths {
		list := []protocol.Diagnostic{}
		for _, r := range runs {
			for _, k := range []string{kindEdit, kindCheck, kindPolicy, kindHeld, kindBudget, kindRefused, kindIgnored} {
				for _, e := range d.byRun[r][k] {
					if e.path == p {
						list = append(list, e.diag)
					}
				}
			}
		}
		pubs = append(pubs, pub{p, list})
	}
	d.mu.Unlock()
	sort.Slice(pubs, func(i, j int) bool { return pubs[i].path < pubs[j].path })
	for _, p := range pubs {
		params := &protocol.PublishDiagnosticsParams{URI: uri.File(p.path), Diagnostics: p.diags}
		if doc, ok := s.docs.byPath(p.path); ok {
			params.Version = protocol.NewOptional(doc.version)
		}
		s.post(func(ctx context.Context) {
			if err := s.client.PublishDiagnostics(ctx, params); err != nil {
				s.log.Debug("publishDiagnostics", "err", err)
			}
		})
	}
}

// newDiag builds an ioh diagnostic.
func newDiag(rng protocol.Range, sev protocol.DiagnosticSeverity, msg string, data diagData, code string) protocol.Diagnostic {
	raw, _ := json.Marshal(data)
	d := protocol.Diagnostic{
		Range:    rng,
		Severity: sev,
		Source:   protocol.NewOptional(diagSource),
		Message:  protocol.String(msg),
		Data:     raw,
	}
	if code != "" {
		d.Code = protocol.String(code)
	}
	return d
}

// diagDataOf decodes an ioh diagnostic's data; ok is false for others.
func diagDataOf(d protocol.Diagnostic) (diagData, bool) {
	src, _ := d.Source.Get()
	if src != diagSource || len(d.Data) == 0 {
		return diagData{}, false
	}
	var dd diagData
	if json.Unmarshal(d.Data, &dd) != nil || dd.RunID == "" {
		return diagData{}, false
	}
	return dd, true
}

// fileText returns an open buffer's text, else the file on disk when it
// is a regular file no larger than a message (a path from a check's
// output may name a FIFO or a symlink to /dev/zero); nil otherwise.
func (s *Server) fileText(abs string) []byte {
	if doc, ok := s.docs.byPath(abs); ok {
		return doc.text
	}
	b, _ := regfile.Read(abs, MaxMessageSize)
	return b
}

// publishReport puts an Error at each location of each failing check.
func (s *Server) publishReport(run string, rep *verify.Report) {
	st, _ := s.runs.lookup(run)
	var entries []diagEntry
	for _, c := range rep.Checks {
		if c.Passed || c.Phase == "red" {
			continue
		}
		for _, loc := range c.Locations {
			abs := loc.Path
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(st.folder, filepath.FromSlash(loc.Path))
			}
			text := s.fileText(abs)
			rng := lineRange(text, loc.Line)
			if loc.Col > 0 {
				starts := lineStarts(text)
				if loc.Line >= 1 && loc.Line-1 < len(starts) {
					off := starts[loc.Line-1] + loc.Col - 1
					if off <= len(text) {
						rng.Start = positionOf(text, starts, off)
					}
				}
			}
			msg := fmt.Sprintf("run %s: check %q failed: %s", run, c.Name, loc.Message)
			if loc.Test != "" {
				msg = fmt.Sprintf("run %s: check %q failed: %s: %s", run, c.Name, loc.Test, loc.Message)
			}
			entries = append(entries, diagEntry{abs, newDiag(rng, protocol.DiagnosticSeverityError, msg, diagData{RunID: run, Kind: kindCheck}, "")})
		}
	}
	s.setDiags(run, kindCheck, entries)
}
