package tools

import (
	"context"
	"encoding/json"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// DeleteFileParams are delete_file's arguments.
type DeleteFileParams struct {
	Path string `json:"path"`
}

const deleteFileDesc = "Delete a workspace file. The deletion goes into the pending change set."

const deleteFileSchema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`

type deleteFile struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewDeleteFile returns delete_file over cs; reads judges the files a
// "did you mean" may name (nil: the built-in layer).
func NewDeleteFile(cs *workspace.ChangeSet, reads ReadCheck) Tool { return deleteFile{cs, reads} }

func (deleteFile) Spec() model.ToolSpec { return spec("delete_file", deleteFileDesc, deleteFileSchema) }
func (deleteFile) ReadOnly() bool       { return false }

func (t deleteFile) Acts(args json.RawMessage) ([]Act, error) {
	return pathAct(t.cs, args, policy.ActWrite, func(p *DeleteFileParams) string { return p.Path })
}

func (t deleteFile) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	acts, err := bound(ctx, args, t.Acts)
	if err != nil {
		return Errorf("%v", err), nil
	}
	var p DeleteFileParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if err := t.cs.Delete(p.Path); err != nil {
		return failed(ctx, t.cs, t.reads, p.Path, err), nil
	}
	return Result{Content: "deleted " + p.Path, Wrote: writtenBy(acts)}, nil
}
