package lsp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/review"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// A change set becomes one WorkspaceEdit: versioned TextDocumentEdits for
// open documents, resource operations for created, deleted and renamed
// files where the client allows them, and, for clients that advertise
// changeAnnotationSupport, annotations with needsConfirmation, one per
// review group of agent/review.

// errCannotExpress means the client's capabilities cannot carry the change
// (e.g. a deletion without resourceOperations); the proposal is deferred.
var errCannotExpress = errors.New("the editor cannot apply this change")

// annotationID is the change-annotation identifier of a review group
// (agent/review decides which file is in which group).
func annotationID(g review.Group) protocol.ChangeAnnotationIdentifier {
	return protocol.ChangeAnnotationIdentifier("ioh." + g.Name)
}

// editedFile is one file of a built edit, with the lines it changed in
// the new text (for the trace diagnostics).
type editedFile struct {
	path    string // absolute
	rel     string
	op      workspace.Op
	newText []byte
	changed []protocol.Range // each hunk's lines in the new text
	empty   bool             // nothing left to mark (a deletion)
}

// buildEdit turns the change set into one WorkspaceEdit.
func (s *Server) buildEdit(folder string, changes []workspace.Change, run, summary string, annotate bool) (protocol.WorkspaceEdit, []editedFile, error) {
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	annotate = annotate && caps.annotations && caps.documentChanges
	var we protocol.WorkspaceEdit
	var files []editedFile
	used := map[string]review.Group{}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	var groups *review.Review
	if annotate {
		// The workspace's own host-run paths and the code that now reads
		// its environment count too (review.Check).
		groups = review.Check(folder, changes, func(rel string) []byte {
			return s.fileText(filepath.Join(folder, filepath.FromSlash(rel)))
		})
	}
	for _, c := range changes {
		abs := filepath.Join(folder, filepath.FromSlash(c.Path))
		u := uri.File(abs)
		ann := protocol.ChangeAnnotationIdentifier("")
		if annotate {
			g := groups.Of(c.Path)
			ann = annotationID(g)
			used[g.Name] = g
		}
		switch {
		case c.Op == workspace.OpDelete:
			if !caps.canResource(protocol.ResourceOperationKindDelete) {
				return we, nil, fmt.Errorf("delete %s: %w (no resourceOperations delete)", c.Path, errCannotExpress)
			}
			we.DocumentChanges = append(we.DocumentChanges, &protocol.DeleteFile{Kind: "delete", URI: u,
				ResourceOperation: protocol.ResourceOperation{Kind: "delete", AnnotationID: ann}})
			files = append(files, editedFile{path: abs, rel: c.Path, op: c.Op, empty: true})
			continue
		case c.From != "":
			if !caps.canResource(protocol.ResourceOperationKindRename) {
				return we, nil, fmt.Errorf("rename %s to %s: %w (no resourceOperations rename)", c.From, c.Path, errCannotExpress)
			}
			oldAbs := filepath.Join(folder, filepath.FromSlash(c.From))
			we.DocumentChanges = append(we.DocumentChanges, &protocol.RenameFile{Kind: "rename", OldURI: uri.File(oldAbs), NewURI: u,
				ResourceOperation: protocol.ResourceOperation{Kind: "rename", AnnotationID: ann}})
			old := s.fileText(oldAbs)
			if tes, rngs := textEdits(old, c.Content, ann); len(tes) > 0 {
				we.DocumentChanges = append(we.DocumentChanges, &protocol.TextDocumentEdit{
					TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}},
					Edits:        tes,
				})
				files = append(files, editedFile{path: abs, rel: c.Path, op: c.Op, newText: c.Content, changed: rngs})
			} else {
				files = append(files, editedFile{path: abs, rel: c.Path, op: c.Op, newText: c.Content, empty: true})
			}
			continue
		}
		var old []byte
		var version *int32
		exists := true
		if doc, ok := s.docs.byPath(abs); ok {
			old, version = doc.text, ptr(doc.version)
		} else if b, err := os.ReadFile(abs); err == nil {
			old = b
		} else {
			exists = false
		}
		if !exists {
			if !caps.documentChanges {
				return we, nil, fmt.Errorf("create %s: %w (no documentChanges)", c.Path, errCannotExpress)
			}
			if !caps.canResource(protocol.ResourceOperationKindCreate) {
				// An edit to a file that does not exist is not a creation
				// everywhere; hold the change rather than have it refused.
				return we, nil, fmt.Errorf("create %s: %w (no create resource operation)", c.Path, errCannotExpress)
			}
			we.DocumentChanges = append(we.DocumentChanges, &protocol.CreateFile{Kind: "create", URI: u,
				ResourceOperation: protocol.ResourceOperation{Kind: "create", AnnotationID: ann}})
		}
		if bytes.Equal(old, c.Content) && exists {
			continue
		}
		tes, rngs := textEdits(old, c.Content, ann)
		if len(tes) == 0 {
			// An empty file created: the CreateFile says it all.
			files = append(files, editedFile{path: abs, rel: c.Path, op: c.Op, newText: c.Content, empty: true})
			continue
		}
		if caps.documentChanges {
			we.DocumentChanges = append(we.DocumentChanges, &protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: version},
				Edits:        tes,
			})
		} else {
			if we.Changes == nil {
				we.Changes = map[uri.URI][]protocol.TextEdit{}
			}
			for _, te := range tes {
				we.Changes[u] = append(we.Changes[u], *te.(*protocol.TextEdit))
			}
		}
		files = append(files, editedFile{path: abs, rel: c.Path, op: c.Op, newText: c.Content, changed: rngs})
	}
	if annotate {
		we.ChangeAnnotations = map[protocol.ChangeAnnotationIdentifier]protocol.ChangeAnnotation{}
		yes := true
		for _, g := range used {
			desc := fmt.Sprintf("run %s: %s — %s", run, oneLine(summary, 160), g.Why)
			we.ChangeAnnotations[annotationID(g)] = protocol.ChangeAnnotation{
				Label: g.Label, NeedsConfirmation: &yes, Description: &desc,
			}
		}
	}
	return we, files, nil
}

// textEdits is one edit per hunk of the workspace's line diff of old and
// new (whole lines, so exact in any encoding and line ending), and the
// range each hunk's lines take in the new text. Equal texts give none.
func textEdits(old, new []byte, ann protocol.ChangeAnnotationIdentifier) ([]protocol.TextDocumentEditElement, []protocol.Range) {
	hunks := workspace.LineHunks(old, new)
	if len(hunks) == 0 {
		return nil, nil
	}
	oldLines, newLines := workspace.Lines(old), workspace.Lines(new)
	oldOff, newOff := lineOffsets(oldLines), lineOffsets(newLines)
	oldStarts, newStarts := lineStarts(old), lineStarts(new)
	edits := make([]protocol.TextDocumentEditElement, 0, len(hunks))
	changed := make([]protocol.Range, 0, len(hunks))
	for _, h := range hunks {
		te := protocol.TextEdit{
			Range:   protocol.Range{Start: positionOf(old, oldStarts, oldOff[h.A0]), End: positionOf(old, oldStarts, oldOff[h.A1])},
			NewText: strings.Join(newLines[h.B0:h.B1], ""),
		}
		changed = append(changed, protocol.Range{Start: positionOf(new, newStarts, newOff[h.B0]), End: positionOf(new, newStarts, newOff[h.B1])})
		if ann != "" {
			edits = append(edits, &protocol.AnnotatedTextEdit{TextEdit: te, AnnotationID: ann})
		} else {
			edits = append(edits, &te)
		}
	}
	return edits, changed
}

// lineOffsets is the byte offset of the start of each line, and of the
// end of the text at index len(lines).
func lineOffsets(lines []string) []int {
	off := make([]int, len(lines)+1)
	for i, l := range lines {
		off[i+1] = off[i] + len(l)
	}
	return off
}
