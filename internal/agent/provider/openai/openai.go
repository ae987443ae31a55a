// Package openai adapts OpenAI chat completions (go-openai) to
// model.Provider, for OpenAI itself, OpenRouter and any OpenAI-compatible
// server (Ollama, vLLM, llama.cpp): streaming with tool-call deltas
// assembled by index, usage through stream_options, cached-token counts
// and classified errors.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/internal/wire"
)

// Base URLs of the known services.
const (
	OpenAIBaseURL     = "https://api.openai.com/v1"
	OpenRouterBaseURL = "https://openrouter.ai/api/v1"
)

// Config configures a Provider.
type Config struct {
	// Kind is the provider name reported: openai, openrouter or
	// openai-compatible.
	Kind       string
	APIKey     string
	BaseURL    string // default OpenAIBaseURL
	Model      string // used when a request names none
	HTTPClient *http.Client
	// Headers are added to every request (OpenRouter's attribution).
	Headers map[string]string
	// CacheControl asks OpenRouter to place Anthropic prompt-cache
	// breakpoints (top-level cache_control) for anthropic/* models, which
	// go-openai has no field for.
	CacheControl bool
	// ReportCost asks for OpenRouter's usage accounting (`"usage":
	// {"include": true}`) and reads the charge it reports, `usage.cost`
	// in the final stream event, into Response.CostUSD.
	ReportCost bool
}

// Provider talks to a chat-completions endpoint. Safe for concurrent use.
type Provider struct {
	client *sdk.Client
	kind   string
	key    string
	model  string
	cache  bool
	cost   bool
}

// New returns a provider for cfg.
func New(cfg Config) *Provider {
	c := sdk.DefaultConfig(cfg.APIKey)
	c.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if c.BaseURL == "" {
		c.BaseURL = OpenAIBaseURL
	}
	c.HTTPClient = wire.Client(cfg.HTTPClient, cfg.Headers)
	kind := cfg.Kind
	if kind == "" {
		kind = "openai"
	}
	return &Provider{client: sdk.NewClientWithConfig(c), kind: kind, key: cfg.APIKey, model: cfg.Model, cache: cfg.CacheControl, cost: cfg.ReportCost}
}

// Name implements model.Provider.
func (p *Provider) Name() string { return p.kind }

// ReportsCost implements model.CostReporter: true for OpenRouter, whose
// usage accounting reports each call's charge.
func (p *Provider) ReportsCost() bool { return p.cost }

// Complete implements model.Provider: one streamed chat completion.
func (p *Provider) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	creq, err := p.request(req)
	if err != nil {
		return nil, &model.Error{Class: model.ClassRequest, Provider: p.kind, Err: err}
	}
	var cap wire.Captured
	cctx := wire.CaptureContext(ctx, &cap)
	extra := map[string]json.RawMessage{}
	if p.cache && strings.HasPrefix(creq.Model, "anthropic/") {
		extra["cache_control"] = json.RawMessage(`{"type":"ephemeral"}`)
	}
	var reported wire.ReportedCost
	if p.cost {
		extra["usage"] = json.RawMessage(`{"include":true}`)
		cctx = wire.TapReportedCost(cctx, &reported)
	}
	if len(extra) > 0 {
		cctx = wire.WithExtraFields(cctx, extra)
	}
	stream, err := p.client.CreateChatCompletionStream(cctx, creq)
	if err != nil {
		return nil, p.fail(ctx, &cap, err, "")
	}
	defer stream.Close()

	var (
		text     strings.Builder
		calls    = map[int]*model.ToolCall{}
		argBufs  = map[int]*strings.Builder{}
		finish   string
		usage    *sdk.Usage
		gotModel string
	)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.fail(ctx, &cap, err, "")
		}
		if chunk.Model != "" {
			gotModel = chunk.Model
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			text.WriteString(ch.Delta.Content)
			model.EmitTextDelta(ctx, ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				idx := 0
				if tc.Index != nil {
					idx = *tc.Index
				}
				call, ok := calls[idx]
				if !ok {
					call = &model.ToolCall{}
					calls[idx] = call
					argBufs[idx] = &strings.Builder{}
				}
				if tc.ID != "" {
					call.ID = tc.ID
				}
				if tc.Function.Name != "" {
					call.Name += tc.Function.Name
				}
				argBufs[idx].WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	if finish == "" {
		return nil, p.fail(ctx, &cap, errors.New("stream ended before a finish_reason"), model.ClassTransport)
	}
	resp := &model.Response{Text: text.String(), StopReason: finish, Provider: p.kind, Model: gotModel}
	if resp.Model == "" {
		resp.Model = creq.Model
	}
	idxs := make([]int, 0, len(calls))
	for i := range calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		call := calls[i]
		args := strings.TrimSpace(argBufs[i].String())
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			return nil, &model.Error{Class: model.ClassMalformed, Provider: p.kind,
				Err: fmt.Errorf("tool call %s: arguments are not valid JSON", call.Name)}
		}
		if call.Name == "" {
			return nil, &model.Error{Class: model.ClassMalformed, Provider: p.kind,
				Err: fmt.Errorf("tool call %d has no function name", i)}
		}
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d", i)
		}
		call.Arguments = json.RawMessage(args)
		resp.ToolCalls = append(resp.ToolCalls, *call)
	}
	if usage != nil {
		cached := int64(0)
		if usage.PromptTokensDetails != nil {
			cached = int64(usage.PromptTokensDetails.CachedTokens)
		}
		resp.Usage = model.Usage{
			InputTokens:     int64(usage.PromptTokens) - cached,
			OutputTokens:    int64(usage.CompletionTokens),
			CacheReadTokens: cached,
		}
	}
	if usd, ok := reported.USD(); ok {
		resp.CostUSD = &usd
	}
	return resp, nil
}

func (p *Provider) fail(ctx context.Context, cap *wire.Captured, err error, class model.Class) *model.Error {
	e := &model.Error{Provider: p.kind, Class: class}
	if cap.Status != 0 {
		e.RetryAfter = wire.RetryAfter(cap.Header, time.Now())
	}
	var api *sdk.APIError
	var reqErr *sdk.RequestError
	switch {
	case class != "":
		e.Err = wire.Redacted(err, p.key)
	case errors.As(err, &api):
		e.Status = api.HTTPStatusCode
		code := fmt.Sprint(api.Code)
		overflow := wire.LooksLikeOverflow(code) || wire.LooksLikeOverflow(api.Message)
		if api.HTTPStatusCode == 0 {
			// An error object inside a 200 stream.
			e.Status = cap.Status
			e.Class = model.ClassServer
			if overflow {
				e.Class = model.ClassContextOverflow
			}
		} else {
			e.Class = wire.ClassOfStatus(api.HTTPStatusCode, overflow)
		}
		msg := api.Message
		if api.Type != "" {
			msg = api.Type + ": " + msg
		}
		e.Err = wire.Redacted(errors.New(msg), p.key)
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		e.Class = wire.ClassOfStatus(reqErr.HTTPStatusCode, wire.LooksLikeOverflow(string(reqErr.Body)))
		e.Err = wire.Redacted(fmt.Errorf("%s: %w", http.StatusText(reqErr.HTTPStatusCode), reqErr.Err), p.key)
	default:
		e.Class = wire.ClassOfErr(ctx, err)
		e.Err = wire.Redacted(err, p.key)
	}
	if e.Status == 0 {
		e.Status = cap.Status
	}
	return e
}
