package model

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCost(t *testing.T) {
	u := Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 400_000}
	tests := []struct {
		model     string
		wantUSD   float64
		wantKnown bool
	}{
		// 3 + 1.5 + 0.6 + 1.5
		{"claude-sonnet-4-6", 6.6, true},
		{"anthropic/claude-sonnet-4.6", 6.6, true},
		{"claude-sonnet-4-5-20250929", 6.6, true},
		// 1.25 + 1 + 0.25 + 0
		{"gpt-5", 2.5, true},
		{"openai/gpt-5-2025-08-07", 2.5, true},
		{"replay", 0, true},
		{"llama3.1:8b", 0, false},
	}
	p := DefaultPrices()
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, known := p.Cost(tt.model, u)
			if known != tt.wantKnown || math.Abs(got-tt.wantUSD) > 1e-9 {
				t.Errorf("Cost(%q) = %v, %v; want %v, %v", tt.model, got, known, tt.wantUSD, tt.wantKnown)
			}
		})
	}
}

func TestPricesMerge(t *testing.T) {
	base := Prices{"a": {Input: 1}, "b": {Input: 2}}
	got := base.Merge(Prices{"b": {Input: 3}, "c": {Output: 4}})
	want := Prices{"a": {Input: 1}, "b": {Input: 3}, "c": {Output: 4}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Merge (-got +want):\n%s", diff)
	}
	if base["b"].Input != 2 {
		t.Error("Merge modified its receiver")
	}
}

func TestDefaultPricesSane(t *testing.T) {
	for name, p := range DefaultPrices() {
		if p.Input <= 0 || p.Output < p.Input || p.CacheRead >= p.Input || p.CacheWrite < 0 {
			t.Errorf("%s: implausible price %+v", name, p)
		}
	}
}

// TestPriceBookSources: a configured price wins and says so, the built-in
// table prices what it knows, and an unknown model is unknown (not $0).
func TestPriceBookSources(t *testing.T) {
	eff := DefaultPrices().Merge(Prices{
		"my-model":          {Input: 1, Output: 2},
		"claude-sonnet-4-6": {Input: 30, Output: 150}, // differs: configured
		"gpt-5":             DefaultPrices()["gpt-5"], // equal: the table's
	})
	b := NewPriceBook(eff)
	u := Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	tests := []struct {
		model   string
		wantUSD float64
		wantSrc CostSource
	}{
		{"my-model", 3, CostConfig},
		{"vendor/my-model", 3, CostConfig},
		{"claude-sonnet-4-6", 180, CostConfig},
		{"anthropic/claude-sonnet-4.6", 180, CostConfig},
		{"gpt-5", 11.25, CostTable},
		{"claude-haiku-4-5", 6, CostTable},
		{"replay", 0, CostTable},
		{"llama3.1:8b", 0, CostUnknown},
	}
	for _, tt := range tests {
		usd, src := b.Cost(tt.model, u)
		if src != tt.wantSrc || math.Abs(usd-tt.wantUSD) > 1e-9 {
			t.Errorf("Cost(%q) = %v, %s; want %v, %s", tt.model, usd, src, tt.wantUSD, tt.wantSrc)
		}
	}
	if b.Known("llama3.1:8b") || !b.Known("my-model") {
		t.Error("Known disagrees with Cost")
	}
	var nilBook *PriceBook
	if _, src := nilBook.Cost("gpt-5", u); src != CostUnknown {
		t.Errorf("a nil book priced a call: %s", src)
	}
}
