package lsp

import (
	"context"
	"slices"

	"go.lsp.dev/protocol"
)

// DidChangeWorkspaceFolders tracks the open folders; a removed folder's
// engine is retired with the others (runs in flight keep theirs).
func (s *Server) DidChangeWorkspaceFolders(ctx context.Context, p *protocol.DidChangeWorkspaceFoldersParams) error {
	for _, f := range p.Event.Added {
		if d, err := pathOf(f.URI); err == nil {
			s.addFolder(d)
		}
	}
	if len(p.Event.Removed) == 0 {
		return nil
	}
	s.mu.Lock()
	for _, f := range p.Event.Removed {
		if d, err := pathOf(f.URI); err == nil {
			s.folders = slices.DeleteFunc(s.folders, func(x string) bool { return x == d })
		}
	}
	s.mu.Unlock()
	s.eng.retire()
	return nil
}

// DidChangeWatchedFiles refreshes code lenses: task files may have
// appeared or gone.
func (s *Server) DidChangeWatchedFiles(ctx context.Context, p *protocol.DidChangeWatchedFilesParams) error {
	s.refreshLenses()
	return nil
}
