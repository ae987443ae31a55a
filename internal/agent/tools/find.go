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

// FindParams are find's arguments.
type FindParams struct {
	Glob string `json:"glob"`
}

const findDesc = "List workspace files matching a ** glob on workspace-relative paths (gitignore-aware, pending edits included), one a line: *.go matches the root only, **/*.go everywhere. Files you may not read without approval are left out and named."

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
		return Errorf("%v", err), nil // the workspace names the glob
	}
	f := newReadFilter(t.cs, t.reads)
	var b strings.Builder
	shown := 0
	for _, p := range paths {
		if f.allow(p) {
			if shown < findMax {
				b.WriteString(p + "\n")
			}
			shown++
		}
	}
	if shown > findMax {
		fmt.Fprintf(&b, "[showing %d of %s files; narrow the glob]\n", findMax, thousands(shown))
	}
	if shown == 0 {
		return Result{Content: f.note() + t.none(ctx, p.Glob)}, nil
	}
	return Result{Content: clip(f.note() + b.String())}, nil
}

// findMax caps the paths one find answer lists.
const findMax = 500

// none explains an empty find: a glob without a slash matches root-level
// paths only, so it says what **/glob would match.
func (t find) none(ctx context.Context, glob string) string {
	if strings.Contains(glob, "/") {
		return fmt.Sprintf("(no file matches %s)", glob)
	}
	wide := "**/" + glob
	paths, err := t.cs.Find(ctx, wide)
	if err != nil {
		return fmt.Sprintf("(no file matches %s)", glob)
	}
	f := newReadFilter(t.cs, t.reads)
	var ok []string
	for _, p := range paths {
		if f.allow(p) {
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		return fmt.Sprintf("(no file matches %s at the root, nor %s anywhere)", glob, wide)
	}
	eg := strings.Join(ok[:min(len(ok), maxSuggest)], ", ")
	return fmt.Sprintf("(no file matches %s at the root; %s matches %s, e.g. %s)", glob, wide, thousands(len(ok)), eg)
}
