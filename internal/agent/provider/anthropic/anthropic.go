// Package anthropic adapts the Anthropic Messages API (official
// anthropic-sdk-go/v2) to model.Provider: streaming, native
// tool_use/tool_result blocks, prompt-cache breakpoints on the stable
// prefix, cache token accounting and classified errors.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/provider/internal/wire"
)

// Name is the provider kind.
const Name = "anthropic"

// DefaultBaseURL is the public API.
const DefaultBaseURL = "https://api.anthropic.com/"

// DefaultMaxTokens is used when a request names none (the API needs one).
const DefaultMaxTokens = 8192

// Config configures a Provider.
type Config struct {
	APIKey     string
	BaseURL    string // default DefaultBaseURL
	Model      string // used when a request names none
	HTTPClient *http.Client
}

// Provider talks to the Messages API. Safe for concurrent use.
type Provider struct {
	client sdk.Client
	key    string
	model  string
}

// New returns a provider. The SDK's environment defaults (ANTHROPIC_*
// variables, profiles) and its OpenTelemetry hooks are off: the key and
// base URL are exactly the configured ones, and the SDK does not retry
// (the chain does).
func New(cfg Config) *Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
		// No spans and no trace headers: prompts must not reach an
		// exporter someone configured for another purpose.
		option.WithoutOpenTelemetry(),
		option.WithHTTPClient(wire.Client(cfg.HTTPClient, nil)),
	}
	return &Provider{client: sdk.NewClient(opts...), key: cfg.APIKey, model: cfg.Model}
}

// Name implements model.Provider.
func (p *Provider) Name() string { return Name }

// Complete implements model.Provider: one streamed Messages call.
func (p *Provider) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, &model.Error{Class: model.ClassRequest, Provider: Name, Err: err}
	}
	var cap wire.Captured
	stream := p.client.Messages.NewStreaming(wire.CaptureContext(ctx, &cap), params)
	defer stream.Close()
	var msg sdk.Message
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, p.fail(ctx, &cap, fmt.Errorf("accumulate stream: %w", err), model.ClassMalformed)
		}
		switch {
		case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta":
			model.EmitTextDelta(ctx, ev.Delta.Text)
		case ev.Type == "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.fail(ctx, &cap, err, "")
	}
	if !stopped {
		return nil, p.fail(ctx, &cap, errors.New("stream ended before message_stop"), model.ClassTransport)
	}
	return p.response(&msg)
}

func (p *Provider) response(msg *sdk.Message) (*model.Response, error) {
	resp := &model.Response{
		StopReason: string(msg.StopReason),
		Provider:   Name,
		Model:      string(msg.Model),
		Usage: model.Usage{
			InputTokens:      msg.Usage.InputTokens,
			OutputTokens:     msg.Usage.OutputTokens,
			CacheReadTokens:  msg.Usage.CacheReadInputTokens,
			CacheWriteTokens: msg.Usage.CacheCreationInputTokens,
		},
	}
	var text strings.Builder
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
		case "tool_use":
			args := json.RawMessage(block.Input)
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			if !json.Valid(args) {
				return nil, &model.Error{Class: model.ClassMalformed, Provider: Name,
					Err: fmt.Errorf("tool_use %s: input is not valid JSON", block.Name)}
			}
			resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{ID: block.ID, Name: block.Name, Arguments: append(json.RawMessage(nil), args...)})
		}
	}
	resp.Text = text.String()
	return resp, nil
}

// fail classifies err; class overrides the classification when set.
func (p *Provider) fail(ctx context.Context, cap *wire.Captured, err error, class model.Class) *model.Error {
	e := &model.Error{Provider: Name, Class: class}
	var api *sdk.Error
	if errors.As(err, &api) {
		e.Status = api.StatusCode
		msg := api.Message
		if msg == "" {
			msg = strings.TrimSpace(api.RawJSON())
		}
		typ := string(api.Type())
		overflow := wire.LooksLikeOverflow(msg)
		switch {
		case class != "":
		case api.StatusCode >= 200 && api.StatusCode < 300:
			// An "error" event inside a 200 stream: classify by its type.
			e.Class = classOfType(typ, overflow)
		default:
			e.Class = wire.ClassOfStatus(api.StatusCode, overflow)
		}
		if api.Response != nil {
			e.RetryAfter = wire.RetryAfter(api.Response.Header, time.Now())
		}
		if typ != "" {
			msg = typ + ": " + msg
		}
		e.Err = wire.Redacted(errors.New(msg), p.key)
		return e
	}
	if e.Class == "" {
		e.Class = wire.ClassOfErr(ctx, err)
	}
	if cap.Status != 0 {
		e.Status = cap.Status
		e.RetryAfter = wire.RetryAfter(cap.Header, time.Now())
	}
	e.Err = wire.Redacted(err, p.key)
	return e
}

func classOfType(typ string, overflow bool) model.Class {
	switch typ {
	case "overloaded_error", "api_error":
		return model.ClassServer
	case "rate_limit_error":
		return model.ClassRateLimited
	case "authentication_error", "permission_error":
		return model.ClassAuth
	case "request_too_large":
		return model.ClassContextOverflow
	case "timeout_error":
		return model.ClassTimeout
	}
	if overflow {
		return model.ClassContextOverflow
	}
	return model.ClassRequest
}
