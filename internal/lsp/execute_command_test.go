package lsp

import (
	"slices"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// TestDispatchIsTheDeclaredCommands: the dispatch has a handler for each
// declared command and for nothing else, so initialize (api.Names) never
// offers a command the server cannot run, nor runs one it does not offer.
func TestDispatchIsTheDeclaredCommands(t *testing.T) {
	for _, name := range api.Names() {
		if commandTable[name] == nil {
			t.Errorf("%s is declared but has no handler", name)
		}
	}
	for name := range commandTable {
		if !slices.Contains(api.Names(), name) {
			t.Errorf("%s has a handler but is not declared in lsp/api", name)
		}
	}
}
