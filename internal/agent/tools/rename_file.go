package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// RenameFileParams are rename_file's arguments.
type RenameFileParams struct {
	From string `json:"from"`
	To   string `json:"to"`
}

const renameFileDesc = "Rename (move) a workspace file; the target must not exist. The rename goes into the pending change set."

const renameFileSchema = `{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}},"required":["from","to"],"additionalProperties":false}`

type renameFile struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewRenameFile returns rename_file over cs; reads judges the files a
// "did you mean" may name (nil: the built-in layer).
func NewRenameFile(cs *workspace.ChangeSet, reads ReadCheck) Tool { return renameFile{cs, reads} }

func (renameFile) Spec() model.ToolSpec { return spec("rename_file", renameFileDesc, renameFileSchema) }
func (renameFile) ReadOnly() bool       { return false }

// Acts: a rename writes (removes) its source and writes its target, and
// reads its source: the content becomes readable under the new name
// (withReads).
func (t renameFile) Acts(args json.RawMessage) ([]Act, error) {
	var p RenameFileParams
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	if err := requirePath(p.From); err != nil {
		return nil, err
	}
	if err := requirePath(p.To); err != nil {
		return nil, err
	}
	from, err := PathAct(t.cs, policy.ActWrite, p.From)
	if err != nil {
		return nil, err
	}
	to, err := PathAct(t.cs, policy.ActWrite, p.To)
	if err != nil {
		return nil, err
	}
	return []Act{from, to, {Act: policy.ActRead, Target: from.Target, Resolved: from.Resolved}}, nil
}

func (t renameFile) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	acts, err := bound(ctx, args, t.Acts)
	if err != nil {
		return Errorf("%v", err), nil
	}
	var p RenameFileParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if err := t.cs.Rename(p.From, p.To); err != nil {
		return failed(ctx, t.cs, t.reads, p.From, err), nil
	}
	return Result{Content: fmt.Sprintf("renamed %s to %s", p.From, p.To), Wrote: writtenBy(acts)}, nil
}
