package lspclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// OpenFile opens a workspace file (read from disk) in the editor.
func (e *Editor) OpenFile(ctx context.Context, rel string) error {
	data, err := os.ReadFile(e.Path(rel))
	if err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
	return e.OpenText(ctx, rel, string(data))
}

// OpenText opens a buffer with the given text.
func (e *Editor) OpenText(ctx context.Context, rel, text string) error {
	u := e.URI(rel)
	e.mu.Lock()
	e.docs[u] = &buffer{version: 1, text: text}
	e.mu.Unlock()
	return e.server.DidOpen(ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: u, LanguageID: protocol.LanguageKind(languageOf(rel)), Version: 1, Text: text,
	}})
}

func languageOf(rel string) string {
	switch filepath.Ext(rel) {
	case ".go":
		return "go"
	case ".yaml", ".yml":
		return "yaml"
	case ".json":
		return "json"
	}
	return "plaintext"
}

// EditFile applies edits to an open buffer and sends them as one
// incremental didChange.
func (e *Editor) EditFile(ctx context.Context, rel string, edits ...protocol.TextEdit) error {
	u := e.URI(rel)
	e.mu.Lock()
	b, ok := e.docs[u]
	if !ok {
		e.mu.Unlock()
		return fmt.Errorf("edit %s: not open", rel)
	}
	text, err := applyEdits(b.text, edits)
	if err != nil {
		e.mu.Unlock()
		return fmt.Errorf("edit %s: %w", rel, err)
	}
	b.text = text
	b.version++
	b.dirty = true
	version := b.version
	e.mu.Unlock()
	// Sent in reverse document order so each range is valid when applied
	// in sequence by the server.
	sorted := append([]protocol.TextEdit(nil), edits...)
	sort.SliceStable(sorted, func(i, j int) bool { return less(sorted[j].Range.Start, sorted[i].Range.Start) })
	changes := make([]protocol.TextDocumentContentChangeEvent, len(sorted))
	for i := range sorted {
		changes[i] = &protocol.TextDocumentContentChangePartial{Range: sorted[i].Range, Text: sorted[i].NewText}
	}
	return e.server.DidChange(ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: version},
		ContentChanges: changes,
	})
}

// SaveFile writes an open buffer to disk and sends didSave with the text.
func (e *Editor) SaveFile(ctx context.Context, rel string) error {
	u := e.URI(rel)
	e.mu.Lock()
	b, ok := e.docs[u]
	var text string
	if ok {
		text = b.text
		b.dirty = false
	}
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("save %s: not open", rel)
	}
	if err := os.WriteFile(e.Path(rel), []byte(text), 0o644); err != nil {
		return fmt.Errorf("save %s: %w", rel, err)
	}
	return e.server.DidSave(ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}, Text: &text})
}

// SaveAll saves every buffer with unsaved changes and returns their
// workspace-relative paths.
func (e *Editor) SaveAll(ctx context.Context) ([]string, error) {
	e.mu.Lock()
	var dirty []string
	for u, b := range e.docs {
		if b.dirty {
			dirty = append(dirty, relOf(e.cfg.Root, u.FsPath()))
		}
	}
	e.mu.Unlock()
	sort.Strings(dirty)
	for _, rel := range dirty {
		if err := e.SaveFile(ctx, rel); err != nil {
			return nil, err
		}
	}
	return dirty, nil
}

// CloseFile closes a buffer (unsaved changes are dropped).
func (e *Editor) CloseFile(ctx context.Context, rel string) error {
	u := e.URI(rel)
	e.mu.Lock()
	delete(e.docs, u)
	e.mu.Unlock()
	return e.server.DidClose(ctx, &protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}})
}

// Version is an open buffer's version (0 when closed).
func (e *Editor) Version(rel string) int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.docs[e.URI(rel)]; ok {
		return b.version
	}
	return 0
}

// Apply applies a workspace edit the way an editor that accepts every
// change would: open buffers change (and a didChange is sent), other
// files change on disk; resource operations are carried out. It refuses
// (applied:false) an edit whose version does not match an open buffer or
// that references an undefined annotation.
func (e *Editor) Apply(ctx context.Context, we protocol.WorkspaceEdit) *protocol.ApplyWorkspaceEditResult {
	fail := func(err error) *protocol.ApplyWorkspaceEditResult {
		msg := err.Error()
		return &protocol.ApplyWorkspaceEditResult{Applied: false, FailureReason: &msg}
	}
	if err := checkAnnotations(we); err != nil {
		return fail(err)
	}
	for u, edits := range we.Changes {
		if err := e.editURI(ctx, u, nil, edits); err != nil {
			return fail(err)
		}
	}
	for _, dc := range we.DocumentChanges {
		var err error
		switch c := dc.(type) {
		case *protocol.TextDocumentEdit:
			var edits []protocol.TextEdit
			for _, el := range c.Edits {
				switch x := el.(type) {
				case *protocol.TextEdit:
					edits = append(edits, *x)
				case *protocol.AnnotatedTextEdit:
					edits = append(edits, x.TextEdit)
				default:
					err = fmt.Errorf("unsupported edit %T", el)
				}
			}
			if err == nil {
				err = e.editURI(ctx, c.TextDocument.URI, c.TextDocument.Version, edits)
			}
		case *protocol.CreateFile:
			p := c.URI.FsPath()
			if _, statErr := os.Stat(p); statErr == nil {
				err = fmt.Errorf("create %s: exists", p)
			} else if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.WriteFile(p, nil, 0o644)
			}
		case *protocol.DeleteFile:
			err = os.Remove(c.URI.FsPath())
			if err == nil {
				_ = e.CloseFile(ctx, relOf(e.cfg.Root, c.URI.FsPath()))
			}
		case *protocol.RenameFile:
			err = os.Rename(c.OldURI.FsPath(), c.NewURI.FsPath())
		default:
			err = fmt.Errorf("unsupported document change %T", dc)
		}
		if err != nil {
			return fail(err)
		}
	}
	return &protocol.ApplyWorkspaceEditResult{Applied: true}
}

// checkAnnotations fails an edit using an annotation it does not define
// (Neovim does the same).
func checkAnnotations(we protocol.WorkspaceEdit) error {
	check := func(id protocol.ChangeAnnotationIdentifier) error {
		if id == "" {
			return nil
		}
		if _, ok := we.ChangeAnnotations[id]; !ok {
			return fmt.Errorf("annotation %q is not defined", id)
		}
		return nil
	}
	for _, dc := range we.DocumentChanges {
		switch c := dc.(type) {
		case *protocol.TextDocumentEdit:
			for _, el := range c.Edits {
				if a, ok := el.(*protocol.AnnotatedTextEdit); ok {
					if err := check(a.AnnotationID); err != nil {
						return err
					}
				}
			}
		case *protocol.CreateFile:
			if err := check(c.AnnotationID); err != nil {
				return err
			}
		case *protocol.DeleteFile:
			if err := check(c.AnnotationID); err != nil {
				return err
			}
		case *protocol.RenameFile:
			if err := check(c.AnnotationID); err != nil {
				return err
			}
		}
	}
	return nil
}

func relOf(root, abs string) string {
	r, err := filepath.Rel(root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}

// editURI applies edits to an open buffer (checking the version) or to
// the file on disk.
func (e *Editor) editURI(ctx context.Context, u uri.URI, version *int32, edits []protocol.TextEdit) error {
	e.mu.Lock()
	b, open := e.docs[u]
	e.mu.Unlock()
	if open {
		if version != nil && *version != b.version {
			return fmt.Errorf("%s: version %d, buffer has %d", u, *version, b.version)
		}
		return e.EditFile(ctx, relOf(e.cfg.Root, u.FsPath()), edits...)
	}
	if version != nil {
		return fmt.Errorf("%s: versioned edit to a document that is not open", u)
	}
	p := u.FsPath()
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	text, err := applyEdits(string(data), edits)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text), 0o644)
}

func less(a, b protocol.Position) bool {
	return a.Line < b.Line || (a.Line == b.Line && a.Character < b.Character)
}

// applyEdits applies non-overlapping edits (all ranges in the original
// text's coordinates).
func applyEdits(text string, edits []protocol.TextEdit) (string, error) {
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, 0, len(edits))
	for _, ed := range edits {
		s, err := offset(text, ed.Range.Start)
		if err != nil {
			return "", err
		}
		en, err := offset(text, ed.Range.End)
		if err != nil {
			return "", err
		}
		if en < s {
			return "", errors.New("range end before start")
		}
		spans = append(spans, span{s, en, ed.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	out := make([]byte, 0, len(text))
	last := 0
	for _, sp := range spans {
		if sp.start < last {
			return "", errors.New("overlapping edits")
		}
		out = append(out, text[last:sp.start]...)
		out = append(out, sp.text...)
		last = sp.end
	}
	out = append(out, text[last:]...)
	return string(out), nil
}

// offset maps a UTF-16 position to a byte offset.
func offset(text string, p protocol.Position) (int, error) {
	line, off := uint32(0), 0
	for line < p.Line {
		i := indexByte(text[off:], '\n')
		if i < 0 {
			return 0, fmt.Errorf("line %d out of range", p.Line)
		}
		off += i + 1
		line++
	}
	units := int(p.Character)
	for units > 0 && off < len(text) && text[off] != '\n' {
		r, size := utf8.DecodeRuneInString(text[off:])
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		units -= n
		off += size
	}
	return off, nil
}

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}
