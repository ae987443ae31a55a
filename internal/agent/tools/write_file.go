package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

const writeFileDesc = "Create or overwrite a workspace file with content. The write goes into the pending change set. A Go or JSON file is parsed after the write and its syntax errors are reported (the write is kept)."

const writeFileSchema = `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`

type writeFile struct{ cs *workspace.ChangeSet }

// NewWriteFile returns write_file over cs.
func NewWriteFile(cs *workspace.ChangeSet) Tool { return writeFile{cs} }

func (writeFile) Spec() model.ToolSpec { return spec("write_file", writeFileDesc, writeFileSchema) }
func (writeFile) ReadOnly() bool       { return false }

func (t writeFile) Acts(args json.RawMessage) ([]Act, error) {
	return pathAct(t.cs, args, policy.ActWrite, func(p *WriteFileParams) string { return p.Path })
}

func (t writeFile) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	acts, err := bound(ctx, args, t.Acts)
	if err != nil {
		return Errorf("%v", err), nil
	}
	var p WriteFileParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if err := t.cs.WriteFile(p.Path, []byte(p.Content)); err != nil {
		return Result{Content: hostless(t.cs, err.Error()), IsError: true}, nil
	}
	msg := fmt.Sprintf("wrote %d bytes to %s", len(p.Content), p.Path)
	// The whole content is the model's: every error in it is reported,
	// and what the file held before (which write_file may not read) is
	// not looked at.
	return Result{Content: msg + syntaxReport(p.Path, nil, []byte(p.Content)), Wrote: writtenBy(acts)}, nil
}
