package lsp

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// A task file that cannot start (a contract error, a cassette outside the
// workspace, a setting the configuration refuses) gets an Error
// diagnostic on the line at fault, besides the error answer of ioh.run:
// the editor shows where to fix it. It goes when that line changes, and
// when the file next starts.

// refusedKey keys a task file's refusal in the diagnostics (no run id).
func refusedKey(path string) string { return "refused:" + path }

// refuseStart publishes err on the task file's line at fault.
func (s *Server) refuseStart(path string, err error) {
	if path == "" || err == nil {
		return
	}
	text := s.fileText(path)
	rng := lineRange(text, 1)
	var ce *contract.Error
	if errors.As(err, &ce) && ce.Line > 0 {
		rng = lineRange(text, ce.Line)
	} else if n := keyLine(text, err.Error()); n > 0 {
		rng = lineRange(text, n)
	}
	msg := fmt.Sprintf("ioh: this task did not start: %v", err)
	d := newDiag(rng, protocol.DiagnosticSeverityError, msg, diagData{Kind: kindRefused}, codeRunRefused)
	s.setDiags(refusedKey(path), kindRefused, []diagEntry{{path, d}})
}

// startedFrom clears a task file's refusal once it starts.
func (s *Server) startedFrom(path string) {
	if path != "" {
		s.setDiags(refusedKey(path), kindRefused, nil)
	}
}

// keyRE matches a YAML key at the start of a line; compiled on first use
// (a package-level regexp would compile on every start of the binary).
var keyRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:`)
})

// keyLine is the 1-based line of the task file's key that msg names
// first ("cassette …: a cassette named by …" is the cassette: line), 0
// for none.
func keyLine(text []byte, msg string) int {
	best, bestAt := 0, -1
	for i, line := range strings.Split(string(text), "\n") {
		m := keyRE().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at := wordIndex(msg, m[1])
		if at >= 0 && (best == 0 || at <= bestAt) {
			best, bestAt = i+1, at
		}
	}
	return best
}

// wordIndex is where word first appears in s as a whole word, or -1.
func wordIndex(s, word string) int {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_])`)
	loc := re.FindStringIndex(s)
	if loc == nil {
		return -1
	}
	return loc[0]
}

// contractPath is the absolute path a contract reference names: a file
// URI, an absolute path, or a path relative to the first folder.
func (s *Server) contractPath(ref string) (string, error) {
	if strings.HasPrefix(ref, "file:") {
		return pathOf(uri.URI(ref))
	}
	if filepath.IsAbs(ref) {
		return ref, nil
	}
	fs := s.folderPaths()
	if len(fs) == 0 {
		return "", fmt.Errorf("relative contract path %q with no workspace folder", ref)
	}
	return filepath.Join(fs[0], filepath.FromSlash(ref)), nil
}
