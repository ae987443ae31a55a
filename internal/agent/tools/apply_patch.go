package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// ApplyPatchParams are apply_patch's arguments.
type ApplyPatchParams struct {
	Patch string `json:"patch"`
}

const applyPatchDesc = "Apply a unified diff (a/ b/ prefixes allowed; hunks may have moved) or a *** Begin Patch envelope (*** Update File:/Add File:/Delete File:, @@ anchor lines) to the pending change set; all hunks apply or none do. Context not there byte for byte is matched ignoring trailing whitespace, then indentation, only when that finds one place. A failing hunk is shown beside the closest lines. Go and JSON files are parsed after and new syntax errors reported."

const applyPatchSchema = `{"type":"object","properties":{"patch":{"type":"string","description":"unified diff or *** Begin Patch envelope"}},"required":["patch"],"additionalProperties":false}`

type applyPatch struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewApplyPatch returns apply_patch over cs; reads judges the files a
// "did you mean" may name (nil: the built-in layer).
func NewApplyPatch(cs *workspace.ChangeSet, reads ReadCheck) Tool { return applyPatch{cs, reads} }

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
	before := map[string][]byte{}
	for _, f := range parsed.Files {
		if b, err := t.cs.ReadFile(f.Path); err == nil {
			before[f.Path] = b
		}
	}
	files, err := t.cs.ApplyParsed(parsed)
	if err != nil {
		var pe *workspace.PatchError
		if errors.As(err, &pe) {
			return failed(ctx, t.cs, t.reads, pe.File, err), nil
		}
		return Result{Content: hostless(t.cs, err.Error()), IsError: true}, nil
	}
	msg := "patched " + strings.Join(files, ", ")
	if len(parsed.Tolerant) > 0 {
		msg += " (matched " + strings.Join(parsed.Tolerant, "; ") + "; the files' own whitespace and line endings were kept)"
	}
	for _, f := range files {
		if after, err := t.cs.ReadFile(f); err == nil {
			msg += syntaxReport(f, before[f], after)
		}
	}
	return Result{Content: msg, Wrote: files}, nil
}
