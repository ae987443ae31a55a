package lsp

import (
	"context"

	"go.lsp.dev/protocol"
)

// Open documents overlay the disk in the workspace layer, so the agent
// reads unsaved buffers. These are notifications: the connection handles
// them strictly in order (see newHandler).

// DidOpen records the buffer and overlays it.
func (s *Server) DidOpen(ctx context.Context, p *protocol.DidOpenTextDocumentParams) error {
	doc, err := s.docs.open(p.TextDocument.URI, p.TextDocument.Version, p.TextDocument.Text)
	if err != nil {
		return err
	}
	s.eng.setDocument(doc.path, doc.text)
	return nil
}

// DidChange applies incremental (or whole) changes in order.
// The trace diagnostics on the changed text go (diag_text.go).
func (s *Server) DidChange(ctx context.Context, p *protocol.DidChangeTextDocumentParams) error {
	var before []byte
	if old, ok := s.docs.get(p.TextDocument.URI); ok {
		before = old.text
	}
	doc, err := s.docs.change(p.TextDocument.URI, p.TextDocument.Version, p.ContentChanges)
	if err != nil {
		return err
	}
	s.eng.setDocument(doc.path, doc.text)
	s.textChanged(doc.path, before, doc.text, p.ContentChanges)
	return nil
}

// DidSave takes the saved text when the client includes it; the overlay
// stays until the buffer is closed.
func (s *Server) DidSave(ctx context.Context, p *protocol.DidSaveTextDocumentParams) error {
	if p.Text == nil {
		return nil
	}
	whole := &protocol.TextDocumentContentChangeWholeDocument{Text: *p.Text}
	doc, ok := s.docs.get(p.TextDocument.URI)
	if !ok {
		return nil
	}
	before := doc.text
	doc, err := s.docs.change(p.TextDocument.URI, doc.version, []protocol.TextDocumentContentChangeEvent{whole})
	if err != nil {
		return err
	}
	s.eng.setDocument(doc.path, doc.text)
	s.textChanged(doc.path, before, doc.text, []protocol.TextDocumentContentChangeEvent{whole})
	return nil
}

// DidClose drops the overlay: the disk is the truth again.
func (s *Server) DidClose(ctx context.Context, p *protocol.DidCloseTextDocumentParams) error {
	doc, ok := s.docs.close(p.TextDocument.URI)
	if ok {
		s.eng.closeDocument(doc.path)
	}
	return nil
}
