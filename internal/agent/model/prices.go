package model

import (
	"regexp"
	"strings"
	"sync"
)

// Price is what a model costs in USD per million tokens of each kind.
// OpenAI bills no cache writes, so CacheWrite is 0 there.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write" yaml:"cache_write"`
}

// Prices maps a model name to its price. Config may override entries
// (`prices`, docs/contract.md#prices); Merge layers an override over the defaults.
type Prices map[string]Price

// ReplayModel is the model name the replay provider reports; it costs 0.
const ReplayModel = "replay"

// DefaultPrices is the built-in table, from the providers' published
// pricing pages as read in November 2026. Anthropic cache writes are the
// 5-minute tier (1.25× input). Entries marked "estimate" could not be
// checked against a published page and follow their family's price.
func DefaultPrices() Prices {
	return Prices{
		// Anthropic.
		"claude-fable-5-1":  {Input: 10, Output: 50, CacheRead: 0.25, CacheWrite: 12.50},
		"claude-fable-5":    {Input: 10, Output: 50, CacheRead: 1.00, CacheWrite: 12.50},
		"claude-opus-5-5":   {Input: 4, Output: 20, CacheRead: 0.20, CacheWrite: 5.00},
		"claude-opus-5":     {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"claude-opus-4-8":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"claude-opus-4-7":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"claude-opus-4-6":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25},
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
		"claude-opus-4-0":   {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
		"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
		"claude-sonnet-5-5": {Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2.50},
		"claude-sonnet-5":   {Input: 2, Output: 10, CacheRead: 0.20, CacheWrite: 2.50},
		"claude-sonnet-4-6": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"claude-sonnet-4-0": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		// Haiku 5.5 is billed higher above 100k prompt tokens; this is the
		// lower band, so long prompts are underestimated.
		"claude-haiku-5-5": {Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite: 0.125},
		"claude-haiku-4-5": {Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25},
		"claude-3-5-haiku": {Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite: 1.00},

		// OpenAI (cached input is billed as CacheRead; no write charge).
		"gpt-5.4":      {Input: 2.50, Output: 15, CacheRead: 0.25},
		"gpt-5.4-mini": {Input: 0.75, Output: 4.50, CacheRead: 0.075},
		"gpt-5.2":      {Input: 1.75, Output: 14, CacheRead: 0.175},
		"gpt-5.1":      {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5":        {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":   {Input: 0.25, Output: 2, CacheRead: 0.025},
		"gpt-5-nano":   {Input: 0.05, Output: 0.40, CacheRead: 0.005},
		"gpt-4.1":      {Input: 2, Output: 8, CacheRead: 0.50},
		"gpt-4.1-mini": {Input: 0.40, Output: 1.60, CacheRead: 0.10},
		"gpt-4.1-nano": {Input: 0.10, Output: 0.40, CacheRead: 0.025},
		"gpt-4o":       {Input: 2.50, Output: 10, CacheRead: 1.25},
		"gpt-4o-mini":  {Input: 0.15, Output: 0.60, CacheRead: 0.075},
		"o3":           {Input: 2, Output: 8, CacheRead: 0.50},
		"o3-mini":      {Input: 1.10, Output: 4.40, CacheRead: 0.55},
		"o4-mini":      {Input: 1.10, Output: 4.40, CacheRead: 0.275},
		// estimate: the 5.x codex models follow their base model's price.
		"gpt-5.2-codex": {Input: 1.75, Output: 14, CacheRead: 0.175},
		"gpt-5.3-codex": {Input: 1.75, Output: 14, CacheRead: 0.175},
	}
}

// Merge returns a copy of p with every entry of over replacing p's.
func (p Prices) Merge(over Prices) Prices {
	out := make(Prices, len(p)+len(over))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Cost is what usage u of model costs in USD. known is false when the
// model is not in the table (the caller decides how to budget then).
// Names are matched as written, then normalized: an OpenRouter vendor
// prefix (anthropic/), a date suffix (-20250929, -2025-08-07) and dots in
// Claude versions (claude-sonnet-4.6) are ignored. Replay costs 0.
func (p Prices) Cost(model string, u Usage) (usd float64, known bool) {
	price, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	return price.cost(u), true
}

// cost is what usage u costs at this price.
func (pr Price) cost(u Usage) float64 {
	return (float64(u.InputTokens)*pr.Input +
		float64(u.OutputTokens)*pr.Output +
		float64(u.CacheReadTokens)*pr.CacheRead +
		float64(u.CacheWriteTokens)*pr.CacheWrite) / 1e6
}

// dateSuffix compiles on first use, not in package init (internal/archtest).
var dateSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`) })

// Lookup finds model's price, normalizing the name as Cost describes.
func (p Prices) Lookup(model string) (Price, bool) {
	if model == ReplayModel || strings.HasPrefix(model, ReplayModel+":") {
		return Price{}, true
	}
	return p.entry(model)
}

// entry finds model's own entry, normalizing the name as Cost describes.
func (p Prices) entry(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = dateSuffix().ReplaceAllString(name, "")
	if strings.HasPrefix(name, "claude-") {
		name = strings.ReplaceAll(name, ".", "-")
	}
	pr, ok := p[name]
	return pr, ok
}

// CostSource says what priced a call (the trace's `cost_source`).
type CostSource string

const (
	// CostProvider: the provider reported the call's charge.
	CostProvider CostSource = "provider"
	// CostTable: the built-in price table.
	CostTable CostSource = "table"
	// CostConfig: a `prices` entry of the user configuration.
	CostConfig CostSource = "config"
	// CostUnknown: nothing could price the call; its cost is unknown,
	// never counted as $0.
	CostUnknown CostSource = "unknown"
)

// PriceBook prices calls from the built-in table with the configured
// `prices` over it, and says which of the two priced each call.
type PriceBook struct {
	builtin Prices
	config  Prices
}

// NewPriceBook returns a book over the effective table (the built-in one
// with the configuration's entries merged in, as config.Config.Prices
// holds it). An entry that is absent from the built-in table or differs
// from it counts as configured; one equal to the built-in price is
// reported as the table's (it is the same number).
func NewPriceBook(effective Prices) *PriceBook {
	b := &PriceBook{builtin: DefaultPrices(), config: Prices{}}
	for name, p := range effective {
		if def, ok := b.builtin[name]; !ok || def != p {
			b.config[name] = p
		}
	}
	return b
}

// Cost prices usage u of model: a configured price first, then the
// built-in one; (0, CostUnknown) when neither knows the model.
func (b *PriceBook) Cost(model string, u Usage) (float64, CostSource) {
	if b == nil {
		return 0, CostUnknown
	}
	if pr, ok := b.config.entry(model); ok {
		return pr.cost(u), CostConfig
	}
	if usd, ok := b.builtin.Cost(model, u); ok {
		return usd, CostTable
	}
	return 0, CostUnknown
}

// Known reports whether model has a price.
func (b *PriceBook) Known(model string) bool {
	_, src := b.Cost(model, Usage{})
	return src != CostUnknown
}
