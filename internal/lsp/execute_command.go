package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/lsp/api"
)

// Command names (docs/lsp.md#commands), declared once in lsp/api;
// ioh.showDiff and ioh.allowOnce back the "Show diff" and "Allow once"
// actions.
var (
	cmdRun        = api.Run.Name
	cmdAsk        = api.Ask.Name
	cmdApprove    = api.Approve.Name
	cmdReject     = api.Reject.Name
	cmdCancel     = api.Cancel.Name
	cmdResume     = api.Resume.Name
	cmdTrace      = api.Trace.Name
	cmdRuns       = api.Runs.Name
	cmdClearTrace = api.ClearTrace.Name
	cmdShowDiff   = api.ShowDiff.Name
	cmdAllowOnce  = api.AllowOnce.Name
)

// commandFunc runs one command with its single argument (nil when none was
// sent) and returns its JSON-encodable result.
type commandFunc func(s *Server, ctx context.Context, arg json.RawMessage) (any, error)

// handle binds a command's declaration to its handler: the argument is
// decoded into the declared type (a bad one is InvalidParams naming the
// command and the field) and the handler must return the declared result.
func handle[A, R any](c api.Spec[A, R], f func(*Server, context.Context, A) (R, error)) commandFunc {
	return func(s *Server, ctx context.Context, arg json.RawMessage) (any, error) {
		a, err := c.Decode(arg)
		if err != nil {
			return nil, invalidParams("%v", err)
		}
		res, err := f(s, ctx, a)
		if err != nil {
			var ae *api.ArgError
			if errors.As(err, &ae) && !isWireError(err) {
				return nil, invalidParams("%v", err)
			}
			return nil, err
		}
		return res, nil
	}
}

// commandTable is the dispatch of workspace/executeCommand: one entry per
// command of api.All (TestEveryDeclaredCommandIsDispatched).
var commandTable = map[string]commandFunc{
	cmdRun:        handle(api.Run, (*Server).commandRun),
	cmdAsk:        handle(api.Ask, (*Server).commandAsk),
	cmdApprove:    handle(api.Approve, (*Server).commandApprove),
	cmdReject:     handle(api.Reject, (*Server).commandReject),
	cmdCancel:     handle(api.Cancel, (*Server).commandCancel),
	cmdResume:     handle(api.Resume, (*Server).commandResume),
	cmdTrace:      handle(api.Trace, (*Server).commandTrace),
	cmdRuns:       handle(api.Runs, (*Server).commandRuns),
	cmdClearTrace: handle(api.ClearTrace, (*Server).commandClearTrace),
	cmdShowDiff:   handle(api.ShowDiff, (*Server).commandShowDiff),
	cmdAllowOnce:  handle(api.AllowOnce, (*Server).commandAllowOnce),
}

// ExecuteCommand dispatches workspace/executeCommand.
func (s *Server) ExecuteCommand(ctx context.Context, p *protocol.ExecuteCommandParams) (protocol.LSPAny, error) {
	f, ok := commandTable[p.Command]
	if !ok {
		return nil, invalidParams("unknown command %q", p.Command)
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
