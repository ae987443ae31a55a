// Package tools holds the agent's tools (SPEC §4), one file each: a params
// struct with json tags, the JSON schema and description next to it, and a
// constructor taking the tool's dependencies. Problems the model should see
// (a bad path, no match, a failing command) come back as results with
// IsError set; Go errors are for infrastructure failures only.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/agent/model"
	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/workspace"
)

// Tool is one capability offered to the model.
type Tool interface {
	Spec() model.ToolSpec
	// ReadOnly tools may run in parallel with each other.
	ReadOnly() bool
	// Acts lists what the policy must allow before Call runs. A malformed
	// argument is an error the model sees.
	Acts(args json.RawMessage) ([]Act, error)
	// Call runs the tool.
	Call(ctx context.Context, args json.RawMessage) (Result, error)
}

// Act is one policy question a call raises. For exec, Argv or Shell is set
// and Target is the argv joined by spaces (or the shell line).
type Act struct {
	Act    policy.Act
	Target string
	Argv   []string
	Shell  string
}

// Result is what the model sees.
type Result struct {
	Content string
	IsError bool
}

// Errorf returns an error result.
func Errorf(format string, a ...any) Result {
	return Result{Content: fmt.Sprintf(format, a...), IsError: true}
}

// MaxResult caps the bytes of one result shown to the model.
const MaxResult = 64 << 10

func clip(s string) string {
	if len(s) <= MaxResult {
		return s
	}
	return s[:MaxResult] + fmt.Sprintf("\n[... %d more bytes not shown]", len(s)-MaxResult)
}

// Env is what the workspace tools operate on.
type Env struct {
	Changes *workspace.ChangeSet
	Sandbox contain.Sandbox
}

// Spawner starts a sub-agent and waits for its outcome (implemented by the
// harness).
type Spawner interface {
	Spawn(ctx context.Context, p SpawnParams) (Result, error)
}

// Set builds the full tool set over env; spawner may be nil (no
// spawn_agent tool, e.g. at the depth cap).
func Set(env Env, spawner Spawner) map[string]Tool {
	ts := []Tool{
		NewReadFile(env.Changes), NewListDir(env.Changes), NewFind(env.Changes), NewGrep(env.Changes),
		NewEditFile(env.Changes), NewWriteFile(env.Changes), NewApplyPatch(env.Changes), NewDeleteFile(env.Changes),
		NewRun(env.Changes, env.Sandbox), NewFinish(),
	}
	if spawner != nil {
		ts = append(ts, NewSpawnAgent(spawner))
	}
	m := make(map[string]Tool, len(ts))
	for _, t := range ts {
		m[t.Spec().Name] = t
	}
	return m
}

// Specs returns the tools' specs sorted by name (a stable prompt prefix).
func Specs(set map[string]Tool) []model.ToolSpec {
	out := make([]model.ToolSpec, 0, len(set))
	for _, t := range set {
		out = append(out, t.Spec())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// decode unmarshals args strictly into p.
func decode(args json.RawMessage, p any) error {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

func spec(name, desc, schema string) model.ToolSpec {
	return model.ToolSpec{Name: name, Description: desc, Schema: json.RawMessage(schema)}
}

// pathAct decodes args into P and returns the one act on its required
// path: the Acts of the single-file tools.
func pathAct[P any](args json.RawMessage, act policy.Act, path func(*P) string) ([]Act, error) {
	var p P
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	if err := requirePath(path(&p)); err != nil {
		return nil, err
	}
	return []Act{{Act: act, Target: path(&p)}}, nil
}

func requirePath(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("bad arguments: path is required")
	}
	return nil
}
