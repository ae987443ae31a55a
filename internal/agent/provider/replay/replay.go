package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// Name is the provider kind.
const Name = "replay"

// Provider answers from a cassette. It is stateless: the turn to return is
// the number of assistant messages already in the request, so a resumed
// run continues where it stopped and sub-agents can run concurrently.
type Provider struct {
	c *Cassette
}

// New returns a provider replaying c.
func New(c *Cassette) *Provider { return &Provider{c: c} }

// Name implements model.Provider.
func (p *Provider) Name() string { return Name }

// TurnIndex is the index of the turn a request asks for: the number of
// assistant messages in its transcript.
func TurnIndex(req *model.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			n++
		}
	}
	return n
}

// Complete implements model.Provider.
func (p *Provider) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, &model.Error{Class: model.ClassTimeout, Provider: Name, Err: err}
	}
	turns, where := p.c.Turns, "turns"
	if req.Agent != "" {
		var ok bool
		turns, ok = p.c.Children[req.Agent]
		where = fmt.Sprintf("children[%q]", req.Agent)
		if !ok {
			return nil, &model.Error{Class: model.ClassExhausted, Provider: Name,
				Err: fmt.Errorf("cassette has no turns for sub-agent %q", req.Agent)}
		}
	}
	i := TurnIndex(req)
	if i >= len(turns) {
		return nil, &model.Error{Class: model.ClassExhausted, Provider: Name,
			Err: fmt.Errorf("cassette ran out of turns: %s has %d, the agent asked for turn %d", where, len(turns), i+1)}
	}
	t := turns[i]
	for _, piece := range pieces(t.Text, streamPieces) {
		model.EmitTextDelta(ctx, piece)
	}
	resp := &model.Response{
		Text:       t.Text,
		Usage:      t.Usage,
		StopReason: t.StopReason,
		Provider:   Name,
		Model:      model.ReplayModel,
		CostUSD:    t.CostUSD,
	}
	if resp.StopReason == "" {
		resp.StopReason = "end_turn"
		if len(t.ToolCalls) > 0 {
			resp.StopReason = "tool_use"
		}
	}
	for j, call := range t.ToolCalls {
		// Compact, so the arguments are the same bytes however the
		// cassette was indented.
		var args bytes.Buffer
		if len(call.Arguments) == 0 || json.Compact(&args, call.Arguments) != nil {
			args.Reset()
			args.WriteString("{}")
		}
		resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{
			ID:        fmt.Sprintf("replay_%d_%d", i, j),
			Name:      call.Name,
			Arguments: json.RawMessage(args.Bytes()),
		})
	}
	return resp, nil
}

// streamPieces is how many pieces a replayed turn's text streams in, at
// most, as a real provider's would arrive.
const streamPieces = 4

// pieces cuts text into at most n pieces, each ending after a space where
// there is one, that add up to text.
func pieces(text string, n int) []string {
	var out []string
	for len(out) < n-1 && len(text) > 0 {
		cut := len(text) / (n - len(out))
		if sp := strings.IndexByte(text[cut:], ' '); sp >= 0 {
			cut += sp + 1
		} else {
			break
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
