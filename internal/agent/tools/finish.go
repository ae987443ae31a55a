package tools

import (
	"context"
	"encoding/json"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
)

// FinishParams are finish's arguments.
type FinishParams struct {
	Summary string `json:"summary"`
}

// FinishName is the tool that ends a run.
const FinishName = "finish"

const finishDesc = "Declare the task done with a short summary of the change. The change set is then verified and proposed for approval. Call it alone, as the last call."

const finishSchema = `{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"],"additionalProperties":false}`

type finish struct{}

// NewFinish returns finish; the harness acts on the call.
func NewFinish() Tool { return finish{} }

func (finish) Spec() model.ToolSpec { return spec(FinishName, finishDesc, finishSchema) }
func (finish) ReadOnly() bool       { return false }
func (finish) Acts(args json.RawMessage) ([]Act, error) {
	_, err := ParseFinish(args)
	return nil, err
}

func (finish) Call(_ context.Context, args json.RawMessage) (Result, error) {
	p, err := ParseFinish(args)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Result{Content: "finished: " + p.Summary}, nil
}

// ParseFinish decodes finish's arguments.
func ParseFinish(args json.RawMessage) (FinishParams, error) {
	var p FinishParams
	err := decode(args, &p)
	return p, err
}
