package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Command names (docs/lsp.md#commands); ioh.showDiff and ioh.allowOnce back the
// "Show diff" and "Allow once" actions.
const (
	cmdRun        = "ioh.run"
	cmdAsk        = "ioh.ask"
	cmdApprove    = "ioh.approve"
	cmdReject     = "ioh.reject"
	cmdCancel     = "ioh.cancel"
	cmdResume     = "ioh.resume"
	cmdTrace      = "ioh.trace"
	cmdRuns       = "ioh.runs"
	cmdClearTrace = "ioh.clearTrace"
	cmdShowDiff   = "ioh.showDiff"
	cmdAllowOnce  = "ioh.allowOnce"
)

// commandFunc runs one command with its single object argument (nil when
// none was sent) and returns a JSON-encodable result.
type commandFunc func(s *Server, ctx context.Context, arg json.RawMessage) (any, error)

var commandTable = map[string]commandFunc{
	cmdRun:        (*Server).commandRun,
	cmdAsk:        (*Server).commandAsk,
	cmdApprove:    (*Server).commandApprove,
	cmdReject:     (*Server).commandReject,
	cmdCancel:     (*Server).commandCancel,
	cmdResume:     (*Server).commandResume,
	cmdTrace:      (*Server).commandTrace,
	cmdRuns:       (*Server).commandRuns,
	cmdClearTrace: (*Server).commandClearTrace,
	cmdShowDiff:   (*Server).commandShowDiff,
	cmdAllowOnce:  (*Server).commandAllowOnce,
}

// ExecuteCommand dispatches workspace/executeCommand.
func (s *Server) ExecuteCommand(ctx context.Context, p *protocol.ExecuteCommandParams) (protocol.LSPAny, error) {
	f, ok := commandTable[p.Command]
	if !ok {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "unknown command %q", p.Command)
	}
	if len(p.Arguments) > 1 {
		return nil, invalidParams("%s takes one object argument, got %d", p.Command, len(p.Arguments))
	}
	var arg json.RawMessage
	if len(p.Arguments) == 1 {
		arg = json.RawMessage(p.Arguments[0])
	}
	res, err := f(s, ctx, arg)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encode %s result: %w", p.Command, err)
	}
	return protocol.LSPAny(raw), nil
}

// decodeArg decodes a command's object argument into v; required names
// the fields that must be present and non-empty.
func decodeArg(cmd string, arg json.RawMessage, v any, required ...string) error {
	if len(arg) == 0 || string(arg) == "null" {
		if len(required) == 0 {
			return nil
		}
		return invalidParams("%s: missing argument object with %v", cmd, required)
	}
	if err := json.Unmarshal(arg, v); err != nil {
		return invalidParams("%s: bad argument: %v", cmd, err)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(arg, &m)
	for _, r := range required {
		val, ok := m[r]
		if !ok || string(val) == `""` || string(val) == "null" {
			return invalidParams("%s: missing %q", cmd, r)
		}
	}
	return nil
}
