package openai

import (
	"encoding/json"
	"fmt"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// request converts a model request to a streamed chat completion in the
// native tool format: assistant tool_calls, then one role:tool message per
// result.
func (p *Provider) request(req *model.Request) (sdk.ChatCompletionRequest, error) {
	name := req.Model
	if name == "" {
		name = p.model
	}
	if name == "" {
		return sdk.ChatCompletionRequest{}, fmt.Errorf("no model name")
	}
	out := sdk.ChatCompletionRequest{
		Model:               name,
		Stream:              true,
		StreamOptions:       &sdk.StreamOptions{IncludeUsage: true},
		MaxCompletionTokens: req.MaxTokens,
	}
	if req.System != "" {
		out.Messages = append(out.Messages, sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleSystem, Content: req.System})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case model.RoleUser:
			for _, r := range m.ToolResults {
				content := r.Content
				if r.IsError {
					content = "error: " + content
				}
				out.Messages = append(out.Messages, sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleTool, ToolCallID: r.CallID, Content: content})
			}
			if m.Text != "" || len(m.ToolResults) == 0 {
				out.Messages = append(out.Messages, sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleUser, Content: m.Text})
			}
		case model.RoleAssistant:
			msg := sdk.ChatCompletionMessage{Role: sdk.ChatMessageRoleAssistant, Content: m.Text}
			for _, c := range m.ToolCalls {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, sdk.ToolCall{ID: c.ID, Type: sdk.ToolTypeFunction,
					Function: sdk.FunctionCall{Name: c.Name, Arguments: args}})
			}
			out.Messages = append(out.Messages, msg)
		default:
			return out, fmt.Errorf("unknown role %q", m.Role)
		}
	}
	for _, t := range req.Tools {
		params := t.Schema
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, sdk.Tool{Type: sdk.ToolTypeFunction, Function: &sdk.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	return out, nil
}
