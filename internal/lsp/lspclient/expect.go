package lspclient

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// Expectation is a named condition on the editor's state that, when it
// does not hold, says what it saw instead (as gopls's integration
// expectations do), so a test that times out explains itself.
type Expectation struct {
	// Description names what is expected ("progress ioh/r-1 ended").
	Description string
	// Check reports whether the state meets it and, when not, what the
	// state holds that comes closest.
	Check func(State) (ok bool, saw string)
}

// Expect waits, under ctx's deadline, until every expectation holds. When
// ctx ends first the error lists each unmet expectation with what it saw.
func (e *Editor) Expect(ctx context.Context, exps ...Expectation) (State, error) {
	unmet := func(s State) []string {
		var out []string
		for _, x := range exps {
			if ok, saw := x.Check(s); !ok {
				out = append(out, fmt.Sprintf("%s; saw %s", x.Description, saw))
			}
		}
		return out
	}
	for {
		e.mu.Lock()
		s := e.snapshotLocked()
		ch := e.changed
		e.mu.Unlock()
		missing := unmet(s)
		if len(missing) == 0 {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s, fmt.Errorf("expectations unmet (%w):\n  %s", ctx.Err(), strings.Join(missing, "\n  "))
		}
	}
}

// ProgressEnd expects the work-done progress token to have ended.
func ProgressEnd(token string) Expectation {
	return Expectation{
		Description: fmt.Sprintf("progress %s ended", token),
		Check: func(s State) (bool, string) {
			if _, ok := ProgressEnded(s, token); ok {
				return true, ""
			}
			ps, ok := s.Progress[token]
			if !ok {
				return false, fmt.Sprintf("no progress for it (tokens: %s)", strings.Join(sortedKeys(s.Progress), ", "))
			}
			var kinds []string
			for _, p := range ps {
				kinds = append(kinds, p.Kind+" "+p.Message)
			}
			return false, "only " + strings.Join(kinds, " | ")
		},
	}
}

// DiagnosticAt expects a diagnostic on rel's 0-based line whose message
// contains text.
func (e *Editor) DiagnosticAt(rel string, line uint32, text string) Expectation {
	u := e.URI(rel)
	return Expectation{
		Description: fmt.Sprintf("a diagnostic at %s:%d containing %q", rel, line+1, text),
		Check: func(s State) (bool, string) {
			var saw []string
			for _, d := range s.Diagnostics[u] {
				msg := messageText(d.Message)
				if d.Range.Start.Line == line && strings.Contains(msg, text) {
					return true, ""
				}
				saw = append(saw, fmt.Sprintf("%d: %s", d.Range.Start.Line+1, msg))
			}
			if len(saw) == 0 {
				return false, "no diagnostics on " + rel
			}
			return false, "[" + strings.Join(saw, "; ") + "]"
		},
	}
}

// EditTouches expects a workspace/applyEdit request that changes rel.
func (e *Editor) EditTouches(rel string) Expectation {
	u := e.URI(rel)
	return Expectation{
		Description: "an applied edit changing " + rel,
		Check: func(s State) (bool, string) {
			var saw []string
			for _, we := range s.Edits {
				for _, t := range touched(we.Edit) {
					if t == u {
						return true, ""
					}
					saw = append(saw, string(t))
				}
			}
			if len(saw) == 0 {
				return false, fmt.Sprintf("%d edits, none changing a file", len(s.Edits))
			}
			return false, "edits of " + strings.Join(saw, ", ")
		},
	}
}

// LogContains expects a window/logMessage containing text.
func LogContains(text string) Expectation {
	return Expectation{
		Description: fmt.Sprintf("a log message containing %q", text),
		Check: func(s State) (bool, string) {
			for _, l := range s.Logs {
				if strings.Contains(l, text) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d log messages %q", len(s.Logs), s.Logs)
		},
	}
}

// messageText is a diagnostic message as text (a string or markup).
func messageText(m any) string {
	switch x := m.(type) {
	case protocol.String:
		return string(x)
	case *protocol.MarkupContent:
		return x.Value
	case protocol.MarkupContent:
		return x.Value
	}
	return fmt.Sprint(m)
}

// touched lists the documents a workspace edit changes.
func touched(we protocol.WorkspaceEdit) []uri.URI {
	var out []uri.URI
	for u := range we.Changes {
		out = append(out, u)
	}
	for _, dc := range we.DocumentChanges {
		switch c := dc.(type) {
		case *protocol.TextDocumentEdit:
			out = append(out, c.TextDocument.URI)
		case *protocol.CreateFile:
			out = append(out, c.URI)
		case *protocol.DeleteFile:
			out = append(out, c.URI)
		case *protocol.RenameFile:
			out = append(out, c.OldURI, c.NewURI)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
