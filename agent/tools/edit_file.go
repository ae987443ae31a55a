package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/agent/model"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// EditFileParams are edit_file's arguments.
type EditFileParams struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

const editFileDesc = "Replace text in a workspace file. old must occur exactly once unless replace_all is true. The edit goes into the pending change set."

const editFileSchema = `{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string","description":"exact text to replace"},"new":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old","new"],"additionalProperties":false}`

type editFile struct{ cs *workspace.ChangeSet }

// NewEditFile returns edit_file over cs.
func NewEditFile(cs *workspace.ChangeSet) Tool { return editFile{cs} }

func (editFile) Spec() model.ToolSpec { return spec("edit_file", editFileDesc, editFileSchema) }
func (editFile) ReadOnly() bool       { return false }

// Acts: a write of the file, and a read of it (withReads).
func (t editFile) Acts(args json.RawMessage) ([]Act, error) {
	w, err := pathAct(t.cs, args, policy.ActWrite, func(p *EditFileParams) string { return p.Path })
	if err != nil {
		return nil, err
	}
	return withReads(w), nil
}

func (t editFile) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	acts, err := bound(ctx, args, t.Acts)
	if err != nil {
		return Errorf("%v", err), nil
	}
	var p EditFileParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Old == "" {
		return Errorf("bad arguments: old must not be empty"), nil
	}
	n, err := t.cs.Edit(p.Path, p.Old, p.New, p.ReplaceAll)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Result{Content: fmt.Sprintf("replaced %d occurrence(s) in %s", n, p.Path), Wrote: writtenBy(acts)}, nil
}
