// Package model is the agent's provider-neutral view of a language model:
// a transcript of messages with tool calls and results, the Provider
// interface every adapter implements, usage accounting, and the error
// classes that drive retries (docs/contract.md#providers-retries-and-fallback).
package model

import (
	"context"
	"encoding/json"
)

// Provider is one model endpoint. Implementations must be safe for
// concurrent use (sub-agents call one provider from several goroutines).
type Provider interface {
	// Name is the provider kind: anthropic, openai, openrouter,
	// openai-compatible or replay.
	Name() string
	// Complete sends the transcript and returns the model's next turn.
	// Failures are *Error values carrying a Class.
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// Agent identifies which agent of a run tree is asking: "" for the root,
	// the spawn goal for a sub-agent. The replay provider picks the
	// cassette's children[Agent] by it.
	Agent string
}

// Role of a message in the transcript.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one transcript entry. An assistant message carries text and
// tool calls; a user message carries text and/or the results of the
// previous turn's tool calls.
type Message struct {
	Role        Role         `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// ToolCall is a call the model asked for.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolResult answers one ToolCall by ID.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// ToolSpec describes a tool to the model; Schema is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"input_schema"`
}

// Response is the model's turn.
type Response struct {
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Usage      Usage      `json:"usage"`
	StopReason string     `json:"stop_reason,omitempty"`
	// Provider and Model say who actually answered (after fallback).
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// CostUSD is the charge the provider itself reported for this call
	// (OpenRouter's usage accounting); nil when it reported none, and the
	// call is then priced from the price table.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// Target is one provider and model a run may call.
type Target struct {
	Provider string
	Model    string
	// ReportsCost: the provider reports each call's charge itself.
	ReportsCost bool
}

// Targeter is implemented by providers that know every model they may
// call (a retry chain: its primary and each fallback), so that a run can
// check before it starts that each of them can be priced.
type Targeter interface {
	Targets() []Target
}

// CostReporter is implemented by adapters whose responses carry the
// provider's own charge for each call (Response.CostUSD).
type CostReporter interface {
	ReportsCost() bool
}

// ReportsCost reports whether p says it reports each call's charge.
func ReportsCost(p Provider) bool {
	r, ok := p.(CostReporter)
	return ok && r.ReportsCost()
}

// Usage counts tokens of one call. InputTokens excludes cache reads and
// writes, which are counted separately.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Total is what the token budget counts: uncached input, cache writes and
// output. Cache reads are not in it (they are reported beside it, and
// the dollar budget prices them at their own rate): a run re-reads its
// cached prefix at every step, and counting that in full ended ordinary
// runs on their token budget at a small cost (docs/budgets.md).
func (u Usage) Total() int64 {
	return u.InputTokens + u.CacheWriteTokens + u.OutputTokens
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}
