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

// ApplyPatchParams are apply_patch's arguments.
type ApplyPatchParams struct {
	Patch string `json:"patch"`
}

const applyPatchDesc = "Apply a unified diff (one or more files, a/ and b/ prefixes allowed) to the pending change set. All hunks apply or none do."

const applyPatchSchema = `{"type":"object","properties":{"patch":{"type":"string","description":"unified diff"}},"required":["patch"],"additionalProperties":false}`

type applyPatch struct{ cs *workspace.ChangeSet }

// NewApplyPatch returns apply_patch over cs.
func NewApplyPatch(cs *workspace.ChangeSet) Tool { return applyPatch{cs} }

func (applyPatch) Spec() model.ToolSpec { return spec("apply_patch", applyPatchDesc, applyPatchSchema) }
func (applyPatch) ReadOnly() bool       { return false }

// Acts asks for a write of every file the patch writes, as
// workspace.ParsePatch decodes its names (the same decoding Call
// applies), and a read of each: whether a hunk applies tells what the
// file holds (withReads).
func (t applyPatch) Acts(args json.RawMessage) ([]Act, error) {
	_, acts, err := t.parse(args)
	return acts, err
}

// parse decodes the call once: the parsed patch and its acts.
func (t applyPatch) parse(args json.RawMessage) (*workspace.Patch, []Act, error) {
	var p ApplyPatchParams
	if err := decode(args, &p); err != nil {
		return nil, nil, err
	}
	parsed, err := workspace.ParsePatch([]byte(p.Patch))
	if err != nil {
		return nil, nil, fmt.Errorf("bad arguments: %w", err)
	}
	var acts []Act
	for _, path := range parsed.Paths() {
		a, err := PathAct(t.cs, policy.ActWrite, path)
		if err != nil {
			return nil, nil, err
		}
		acts = append(acts, a)
	}
	return parsed, withReads(acts), nil
}

// Call applies the very patch whose file names its acts came from, once
// they are the acts the policy judged.
func (t applyPatch) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	parsed, acts, err := t.parse(args)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if err := checkJudged(ctx, acts); err != nil {
		return Errorf("%v", err), nil
	}
	files, err := t.cs.ApplyParsed(parsed)
	if err != nil {
		return Errorf("apply patch: %v", err), nil
	}
	return Result{Content: "patched " + strings.Join(files, ", "), Wrote: files}, nil
}
