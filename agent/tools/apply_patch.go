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

// Acts asks for a write of every file the patch names (both sides of a
// rename).
func (applyPatch) Acts(args json.RawMessage) ([]Act, error) {
	var p ApplyPatchParams
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	paths := PatchPaths(p.Patch)
	if len(paths) == 0 {
		return nil, fmt.Errorf("bad arguments: the patch names no files (want ---/+++ headers)")
	}
	acts := make([]Act, len(paths))
	for i, path := range paths {
		acts[i] = Act{Act: policy.ActWrite, Target: path}
	}
	return acts, nil
}

func (t applyPatch) Call(_ context.Context, args json.RawMessage) (Result, error) {
	var p ApplyPatchParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	files, err := t.cs.ApplyPatch([]byte(p.Patch))
	if err != nil {
		return Errorf("apply patch: %v", err), nil
	}
	return Result{Content: "patched " + strings.Join(files, ", ")}, nil
}

// PatchPaths returns the distinct workspace paths named by a unified
// diff's ---/+++ headers, a/ and b/ prefixes and /dev/null dropped.
func PatchPaths(patch string) []string {
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		var p string
		switch {
		case strings.HasPrefix(line, "--- "):
			p = line[4:]
		case strings.HasPrefix(line, "+++ "):
			p = line[4:]
		default:
			continue
		}
		if i := strings.IndexByte(p, '\t'); i >= 0 {
			p = p[:i]
		}
		p = strings.TrimSpace(p)
		if p == "/dev/null" || p == "" {
			continue
		}
		if strings.HasPrefix(p, "a/") || strings.HasPrefix(p, "b/") {
			p = p[2:]
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
