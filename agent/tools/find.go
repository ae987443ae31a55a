package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/agent/model"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// FindParams are find's arguments.
type FindParams struct {
	Glob string `json:"glob"`
}

const findDesc = "List workspace files matching a ** glob (gitignore-aware, pending edits included), one relative path a line. Files you may not read without approval are left out and named."

const findSchema = `{"type":"object","properties":{"glob":{"type":"string","description":"a ** glob on workspace-relative paths, e.g. **/*.go"}},"required":["glob"],"additionalProperties":false}`

type find struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewFind returns find over cs; every path it returns is judged by reads
// (nil: the built-in layer).
func NewFind(cs *workspace.ChangeSet, reads ReadCheck) Tool { return find{cs, reads} }

func (find) Spec() model.ToolSpec { return spec("find", findDesc, findSchema) }
func (find) ReadOnly() bool       { return true }

// Acts: a read of the workspace; each path found is judged again when
// the results are filtered (readFilter).
func (t find) Acts(args json.RawMessage) ([]Act, error) {
	var p FindParams
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	a, err := PathAct(t.cs, policy.ActRead, ".")
	if err != nil {
		return nil, err
	}
	return []Act{a}, nil
}

func (t find) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var p FindParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Glob == "" {
		return Errorf("bad arguments: glob is required"), nil
	}
	paths, err := t.cs.Find(ctx, p.Glob)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Errorf("find %s: %v", p.Glob, err), nil
	}
	f := newReadFilter(t.cs, t.reads)
	var b strings.Builder
	for _, p := range paths {
		if f.allow(p) {
			b.WriteString(p + "\n")
		}
	}
	if b.Len() == 0 {
		return Result{Content: f.note() + "(no files match)"}, nil
	}
	return Result{Content: clip(f.note() + b.String())}, nil
}
