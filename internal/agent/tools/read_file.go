package tools

import (
	"context"
	"encoding/json"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// ReadFileParams are read_file's arguments; Offset is a 1-based line.
type ReadFileParams struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

const readFileDesc = "Read a workspace file (pending edits included), lines numbered like cat -n (the numbers are not in the file: leave them out of edit_file's old). By default at most 400 lines or 16 KiB from offset; a partial window ends with \"[lines 1–400 of 4,073; continue with offset=401]\". Lines over 2,000 bytes are cut (grep finds text in them); a binary file is described, not shown."

const readFileSchema = `{"type":"object","properties":{"path":{"type":"string","description":"workspace-relative path"},"offset":{"type":"integer","minimum":1,"description":"first line, 1-based (default 1)"},"limit":{"type":"integer","minimum":1,"description":"most lines (default 400)"}},"required":["path"],"additionalProperties":false}`

type readFile struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewReadFile returns read_file over cs; reads judges the files a "did
// you mean" may name (nil: the built-in layer).
func NewReadFile(cs *workspace.ChangeSet, reads ReadCheck) Tool { return readFile{cs, reads} }

func (readFile) Spec() model.ToolSpec { return spec("read_file", readFileDesc, readFileSchema) }
func (readFile) ReadOnly() bool       { return true }

func (t readFile) Acts(args json.RawMessage) ([]Act, error) {
	return pathAct(t.cs, args, policy.ActRead, func(p *ReadFileParams) string { return p.Path })
}

func (t readFile) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	if _, err := bound(ctx, args, t.Acts); err != nil {
		return Errorf("%v", err), nil
	}
	var p ReadFileParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	b, err := t.cs.ReadFile(p.Path)
	if err != nil {
		return failed(ctx, t.cs, t.reads, p.Path, err), nil
	}
	s, err := window(p.Path, b, p.Offset, p.Limit)
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Result{Content: s}, nil
}
