package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/agent/model"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// GrepParams are grep's arguments.
type GrepParams struct {
	Pattern string `json:"pattern"`
	Glob    string `json:"glob,omitempty"`
	Literal bool   `json:"literal,omitempty"`
	Max     int    `json:"max,omitempty"`
}

const grepDesc = "Search workspace files (gitignore-aware, pending edits included) for a regular expression (or a literal string); prints path:line:text. Files you may not read without approval (.env, keys) are never searched, so they neither appear nor count against max; find names them, and read_file one to be asked."

const grepSchema = `{"type":"object","properties":{"pattern":{"type":"string"},"glob":{"type":"string","description":"only files matching this ** glob"},"literal":{"type":"boolean"},"max":{"type":"integer","minimum":1,"description":"stop after this many matches (default 200)"}},"required":["pattern"],"additionalProperties":false}`

type grep struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewGrep returns grep over cs; every file it returns lines of is judged
// by reads (nil: the built-in layer).
func NewGrep(cs *workspace.ChangeSet, reads ReadCheck) Tool { return grep{cs, reads} }

func (grep) Spec() model.ToolSpec { return spec("grep", grepDesc, grepSchema) }
func (grep) ReadOnly() bool       { return true }

// Acts: a read of the workspace; each file found is judged again when
// the results are filtered (readFilter).
func (t grep) Acts(args json.RawMessage) ([]Act, error) {
	var p GrepParams
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	a, err := PathAct(t.cs, policy.ActRead, ".")
	if err != nil {
		return nil, err
	}
	return []Act{a}, nil
}

func (t grep) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var p GrepParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Pattern == "" {
		return Errorf("bad arguments: pattern is required"), nil
	}
	f := newReadFilter(t.cs, t.reads)
	o := workspace.GrepOptions{Pattern: p.Pattern, Literal: p.Literal, Max: p.Max, Skip: f.skip}
	if o.Max <= 0 {
		o.Max = 200
	}
	if p.Glob != "" {
		o.Globs = []string{p.Glob}
	}
	ms, err := t.cs.Grep(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Errorf("grep %s: %v", p.Pattern, err), nil
	}
	// The answer says nothing of withheld files (no note, unlike find's):
	// which of them match is exactly what must not be told.
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
	}
	if b.Len() == 0 {
		return Result{Content: "(no matches)"}, nil
	}
	return Result{Content: clip(b.String())}, nil
}
