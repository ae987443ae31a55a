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

// EditFileParams are edit_file's arguments.
type EditFileParams struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

const editFileDesc = "Replace text in a workspace file (into the pending change set). old must occur once unless replace_all: copy it from read_file without the line numbers, with a line of context if needed. If old is not there byte for byte, trailing whitespace and \\r, then indentation, are ignored, only when that finds one place; the file keeps its own whitespace. Errors list each occurrence's line or the closest lines. Go and JSON files are parsed after the edit and new syntax errors reported."

const editFileSchema = `{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string","description":"text to replace"},"new":{"type":"string","description":"replacement (differs from old)"},"replace_all":{"type":"boolean"}},"required":["path","old","new"],"additionalProperties":false}`

type editFile struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewEditFile returns edit_file over cs; reads judges the files a "did
// you mean" may name (nil: the built-in layer).
func NewEditFile(cs *workspace.ChangeSet, reads ReadCheck) Tool { return editFile{cs, reads} }

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

// snippetContext is how many lines around an edited region its success
// result shows.
const snippetContext = 2

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
	before, _ := t.cs.ReadFile(p.Path)
	e, err := t.cs.Edit(p.Path, p.Old, p.New, p.ReplaceAll)
	if err != nil {
		return failed(ctx, t.cs, t.reads, p.Path, err), nil
	}
	after, err := t.cs.ReadFile(p.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "edited %s: replaced %d occurrence(s)", p.Path, e.Count)
	if e.Count == 1 {
		fmt.Fprintf(&b, " at line %d", e.Line)
	} else {
		fmt.Fprintf(&b, ", the first at line %d", e.Line)
	}
	var how []string
	if e.Unnumbered {
		how = append(how, "read_file's line numbers dropped from old")
	}
	if e.Level != workspace.Exact {
		how = append(how, "old matched "+e.Level.String()+"; the file's own whitespace and line endings were kept")
	}
	if len(how) > 0 {
		b.WriteString(" (" + strings.Join(how, "; ") + ")")
	}
	fmt.Fprintf(&b, ":\n%s", snippet(string(after), e.Line-snippetContext, e.Line+max(e.Lines, 1)+snippetContext))
	b.WriteString(strings.TrimSuffix(syntaxReport(p.Path, before, after), "\n"))
	return Result{Content: strings.TrimRight(b.String(), "\n"), Wrote: writtenBy(acts)}, nil
}
