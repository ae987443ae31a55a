package lsp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// A change set becomes one WorkspaceEdit: versioned TextDocumentEdits for
// open documents, resource operations for created, deleted and renamed
// files where the client allows them, and, for clients that advertise
// changeAnnotationSupport, annotations with needsConfirmation grouped by
// purpose.

// errCannotExpress means the client's capabilities cannot carry the change
// (e.g. a deletion without resourceOperations); the proposal is deferred.
var errCannotExpress = errors.New("the editor cannot apply this change")

// Purpose groups, in the order a reviewer sees them.
const (
	groupImpl     = "ioh.implementation"
	groupTests    = "ioh.tests"
	groupConfig   = "ioh.config"
	groupRunsCode = "ioh.runs-code"
)

var groupLabels = map[string]string{
	groupImpl:     "Implementation",
	groupTests:    "Tests",
	groupConfig:   "Configuration",
	groupRunsCode: "Runs code on your machine: review carefully",
}

var groupWhy = map[string]string{
	groupImpl:     "source changes that make the goal true",
	groupTests:    "tests added or changed to prove the change",
	groupConfig:   "configuration and dependency files",
	groupRunsCode: "build scripts, CI configuration, package manifests, editor tasks or git hooks: these run code on your machine later",
}

// purpose classifies a workspace-relative slash path.
func purpose(rel string) string {
	base := path.Base(rel)
	lower := strings.ToLower(rel)
	switch {
	case strings.HasPrefix(lower, ".github/workflows/"), strings.HasPrefix(lower, ".circleci/"),
		strings.HasPrefix(lower, ".git/hooks/"), strings.HasPrefix(lower, ".husky/"),
		lower == ".gitlab-ci.yml", lower == ".vscode/tasks.json", lower == ".vscode/launch.json",
		base == "Makefile", base == "GNUmakefile", strings.HasSuffix(base, ".mk"),
		base == "package.json", base == "setup.py", base == "pyproject.toml", base == "build.rs",
		base == "build.gradle", base == "build.gradle.kts", base == "pom.xml", base == "Jenkinsfile",
		base == "Dockerfile", base == "justfile", base == "Taskfile.yml", base == "Rakefile",
		strings.HasSuffix(base, ".sh"), base == ".envrc", base == ".pre-commit-config.yaml":
		return groupRunsCode
	case strings.HasSuffix(base, "_test.go"), strings.HasPrefix(base, "test_"), strings.HasSuffix(base, "_test.py"),
		strings.Contains(base, ".test."), strings.Contains(base, ".spec."),
		strings.HasPrefix(lower, "test/"), strings.HasPrefix(lower, "tests/"), strings.Contains(lower, "/tests/"),
		strings.Contains(lower, "__tests__/"), strings.Contains(lower, "/testdata/"), strings.HasPrefix(lower, "testdata/"):
		return groupTests
	}
	switch path.Ext(base) {
	case ".yaml", ".yml", ".json", ".toml", ".ini", ".cfg", ".conf", ".mod", ".sum", ".lock":
		return groupConfig
	}
	return groupImpl
}

// editedFile is one file of a built edit, with the lines it changed in
// the new text (for the trace diagnostics).
type editedFile struct {
	path    string // absolute
	rel     string
	op      workspace.Op
	newText []byte
	changed protocol.Range // in the new text
	empty   bool           // nothing left to mark (a deletion)
}

// buildEdit turns the change set into one WorkspaceEdit.
func (s *Server) buildEdit(folder string, changes []workspace.Change, run, summary string, annotate bool) (protocol.WorkspaceEdit, []editedFile, error) {
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	annotate = annotate && caps.annotations && caps.documentChanges
	var we protocol.WorkspaceEdit
	var files []editedFile
	used := map[string]bool{}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	for _, c := range changes {
		abs := filepath.Join(folder, filepath.FromSlash(c.Path))
		u := uri.File(abs)
		group := purpose(c.Path)
		ann := protocol.ChangeAnnotationIdentifier("")
		if annotate {
			ann = protocol.ChangeAnnotationIdentifier(group)
			used[group] = true
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
			te, rng := textEdit(old, c.Content, ann)
			we.DocumentChanges = append(we.DocumentChanges, &protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}},
				Edits:        []protocol.TextDocumentEditElement{te},
			})
			files = append(files, editedFile{path: abs, rel: c.Path, op: c.Op, newText: c.Content, changed: rng})
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
		te, rng := textEdit(old, c.Content, ann)
		if caps.documentChanges {
			we.DocumentChanges = append(we.DocumentChanges, &protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: version},
				Edits:        []protocol.TextDocumentEditElement{te},
			})
		} else {
			if we.Changes == nil {
				we.Changes = map[uri.URI][]protocol.TextEdit{}
			}
			plain := te.(*protocol.TextEdit)
			we.Changes[u] = append(we.Changes[u], *plain)
		}
		files = append(files, editedFile{path: abs, rel: c.Path, op: c.Op, newText: c.Content, changed: rng})
	}
	if annotate {
		we.ChangeAnnotations = map[protocol.ChangeAnnotationIdentifier]protocol.ChangeAnnotation{}
		yes := true
		for g := range used {
			desc := fmt.Sprintf("run %s: %s — %s", run, oneLine(summary, 160), groupWhy[g])
			we.ChangeAnnotations[protocol.ChangeAnnotationIdentifier(g)] = protocol.ChangeAnnotation{
				Label: groupLabels[g], NeedsConfirmation: &yes, Description: &desc,
			}
		}
	}
	return we, files, nil
}

// textEdit is the smallest whole-line replacement turning old into new,
// and the range of the replaced lines in the new text.
func textEdit(old, new []byte, ann protocol.ChangeAnnotationIdentifier) (protocol.TextDocumentEditElement, protocol.Range) {
	pre := 0 // bytes of whole equal leading lines
	for i := 0; i < len(old) && i < len(new) && old[i] == new[i]; i++ {
		if old[i] == '\n' {
			pre = i + 1
		}
	}
	suf := 0 // bytes of whole equal trailing lines, not overlapping pre
	for i := 1; i <= len(old)-pre && i <= len(new)-pre && old[len(old)-i] == new[len(new)-i]; i++ {
		if old[len(old)-i] == '\n' && i > 1 {
			suf = i - 1
		}
	}
	if len(old)-pre == len(new)-pre && bytes.Equal(old[pre:], new[pre:]) {
		suf = len(old) - pre
	}
	oldStarts := lineStarts(old)
	rng := protocol.Range{Start: positionOf(old, oldStarts, pre), End: positionOf(old, oldStarts, len(old)-suf)}
	newText := string(new[pre : len(new)-suf])
	newStarts := lineStarts(new)
	changed := protocol.Range{Start: positionOf(new, newStarts, pre), End: positionOf(new, newStarts, len(new)-suf)}
	te := protocol.TextEdit{Range: rng, NewText: newText}
	if ann != "" {
		return &protocol.AnnotatedTextEdit{TextEdit: te, AnnotationID: ann}, changed
	}
	return &te, changed
}
