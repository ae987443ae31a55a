package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// resolve decides the model a run calls, in one place: the overrides over
// the contract, then each provider's default name, without touching the
// contract's own fallback list.
func TestResolveModel(t *testing.T) {
	fb := []contract.Fallback{{Provider: "openrouter"}, {Provider: "openai", Name: "gpt-5-mini"}}
	tests := []struct {
		name string
		m    contract.Model
		ov   Overrides
		want contract.Model
	}{
		{"--model wins", contract.Model{Provider: "anthropic", Name: "claude-haiku-4-5"}, Overrides{Model: "claude-opus-4-6"},
			contract.Model{Provider: "anthropic", Name: "claude-opus-4-6"}},
		{"provider default name", contract.Model{Provider: "openai"}, Overrides{},
			contract.Model{Provider: "openai", Name: "gpt-5"}},
		{"fallback defaults", contract.Model{Provider: "anthropic", Name: "claude-sonnet-4-6", Fallback: fb}, Overrides{},
			contract.Model{Provider: "anthropic", Name: "claude-sonnet-4-6", Fallback: []contract.Fallback{
				{Provider: "openrouter", Name: "anthropic/claude-sonnet-4.6"}, {Provider: "openai", Name: "gpt-5-mini"}}}},
		{"--provider drops the contract's name", contract.Model{Provider: "anthropic", Name: "claude-sonnet-4-6"}, Overrides{Provider: "openai"},
			contract.Model{Provider: "openai", Name: "gpt-5"}},
		{"replay keeps no name", contract.Model{}, Overrides{Cassette: "/c.json"},
			contract.Model{Provider: "replay", Cassette: "/c.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.ov.resolve(tt.m), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
	if fb[0].Name != "" {
		t.Errorf("resolve wrote into the contract's fallback list: %+v", fb)
	}
}
