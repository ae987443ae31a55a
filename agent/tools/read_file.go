package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/agent/model"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// ReadFileParams are read_file's arguments; Offset is a 1-based line.
type ReadFileParams struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

const readFileDesc = "Read a workspace file (pending edits included). offset is the first line (1-based), limit the number of lines."

const readFileSchema = `{"type":"object","properties":{"path":{"type":"string","description":"workspace-relative path"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`

type readFile struct{ cs *workspace.ChangeSet }

// NewReadFile returns read_file over cs.
func NewReadFile(cs *workspace.ChangeSet) Tool { return readFile{cs} }

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
		return Errorf("%v", err), nil
	}
	s := string(b)
	if p.Offset > 1 || p.Limit > 0 {
		lines := strings.SplitAfter(s, "\n")
		start := max(p.Offset-1, 0)
		if start >= len(lines) {
			return Errorf("read %s: offset %d is past the end (%d lines)", p.Path, p.Offset, len(lines)), nil
		}
		end := len(lines)
		if p.Limit > 0 && start+p.Limit < end {
			end = start + p.Limit
		}
		s = strings.Join(lines[start:end], "")
	}
	return Result{Content: clip(s)}, nil
}
