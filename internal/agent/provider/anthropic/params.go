package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// params builds the Messages request. Cache breakpoints (at most four) go
// on the stable prefix: the last tool, the system prompt, the newest
// message (so the next step reads everything before it from the cache)
// and the newest message of the previous request (so this step reads the
// prefix the previous step wrote).
func (p *Provider) params(req *model.Request) (sdk.MessageNewParams, error) {
	name := req.Model
	if name == "" {
		name = p.model
	}
	if name == "" {
		return sdk.MessageNewParams{}, fmt.Errorf("no model name")
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(name), MaxTokens: maxTokens}
	for i, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return params, err
		}
		if i == len(req.Tools)-1 {
			tool.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	marks := breakpoints(req.Messages)
	for i, m := range req.Messages {
		blocks, err := messageBlocks(m)
		if err != nil {
			return params, err
		}
		for _, j := range marks {
			if j == i {
				if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
					*cc = sdk.NewCacheControlEphemeralParam()
				}
			}
		}
		if m.Role == model.RoleAssistant {
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, sdk.NewUserMessage(blocks...))
		}
	}
	return params, nil
}

// breakpoints picks the messages whose last block gets cache_control: the
// newest one, and the newest user message before the last assistant turn
// (the end of the previous request's transcript).
func breakpoints(msgs []model.Message) []int {
	if len(msgs) == 0 {
		return nil
	}
	out := []int{len(msgs) - 1}
	lastAssistant := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			lastAssistant = i
			break
		}
	}
	for i := lastAssistant - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			if i != len(msgs)-1 {
				out = append(out, i)
			}
			break
		}
	}
	return out
}

func toolParam(t model.ToolSpec) (sdk.ToolParam, error) {
	var schema map[string]any
	if len(t.Schema) > 0 {
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return sdk.ToolParam{}, fmt.Errorf("tool %s: schema: %w", t.Name, err)
		}
	}
	in := sdk.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	for k, v := range schema {
		if k != "properties" && k != "required" && k != "type" {
			in.ExtraFields[k] = v
		}
	}
	tp := sdk.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tp.Description = sdk.String(t.Description)
	}
	return tp, nil
}

// messageBlocks converts one transcript message to content blocks (never
// empty: the API rejects empty turns).
func messageBlocks(m model.Message) ([]sdk.ContentBlockParamUnion, error) {
	var blocks []sdk.ContentBlockParamUnion
	switch m.Role {
	case model.RoleUser:
		// tool_result blocks must come first in a user turn.
		for _, r := range m.ToolResults {
			blocks = append(blocks, sdk.NewToolResultBlock(r.CallID, r.Content, r.IsError))
		}
		if m.Text != "" || len(blocks) == 0 {
			text := m.Text
			if text == "" {
				text = "(no content)"
			}
			blocks = append(blocks, sdk.NewTextBlock(text))
		}
		return blocks, nil
	case model.RoleAssistant:
		if m.Text != "" {
			blocks = append(blocks, sdk.NewTextBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			args := c.Arguments
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			if !json.Valid(args) {
				return nil, fmt.Errorf("tool call %s: arguments are not valid JSON", c.ID)
			}
			blocks = append(blocks, sdk.NewToolUseBlock(c.ID, args, c.Name))
		}
		if len(blocks) == 0 {
			blocks = append(blocks, sdk.NewTextBlock("(no content)"))
		}
		return blocks, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}
