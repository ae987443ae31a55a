package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// ListDirParams are list_dir's arguments; Path "" is the workspace root.
type ListDirParams struct {
	Path string `json:"path,omitempty"`
}

const listDirDesc = "List a workspace directory (pending edits included): one entry a line, directories end in '/', files show their size."

const listDirSchema = `{"type":"object","properties":{"path":{"type":"string","description":"workspace-relative directory, default the root"}},"additionalProperties":false}`

type listDir struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewListDir returns list_dir over cs; reads judges the files a "did you
// mean" may name (nil: the built-in layer).
func NewListDir(cs *workspace.ChangeSet, reads ReadCheck) Tool { return listDir{cs, reads} }

func (listDir) Spec() model.ToolSpec { return spec("list_dir", listDirDesc, listDirSchema) }
func (listDir) ReadOnly() bool       { return true }

func (t listDir) Acts(args json.RawMessage) ([]Act, error) {
	var p ListDirParams
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	target := p.Path
	if target == "" {
		target = "."
	}
	a, err := PathAct(t.cs, policy.ActRead, target)
	if err != nil {
		return nil, err
	}
	return []Act{a}, nil
}

func (t listDir) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	if _, err := bound(ctx, args, t.Acts); err != nil {
		return Errorf("%v", err), nil
	}
	var p ListDirParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	dir := p.Path
	if dir == "" {
		dir = "."
	}
	ents, err := t.cs.ListDir(dir)
	if err != nil {
		return failed(ctx, t.cs, t.reads, dir, err), nil
	}
	var b strings.Builder
	for _, e := range ents {
		if e.IsDir {
			fmt.Fprintf(&b, "%s/\n", e.Name)
		} else {
			fmt.Fprintf(&b, "%s %d\n", e.Name, e.Size)
		}
	}
	if b.Len() == 0 {
		return Result{Content: "(empty directory)"}, nil
	}
	return Result{Content: clip(b.String())}, nil
}
