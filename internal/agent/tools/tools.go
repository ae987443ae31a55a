// Package tools holds the agent's tools (docs/architecture.md#packages),
// one file each: a params struct with json tags, the JSON schema and
// description next to it, and a constructor taking the tool's
// dependencies. Problems the model should see
// (a bad path, no match, a failing command) come back as results with
// IsError set; Go errors are for infrastructure failures only.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
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

// Act is one policy question a call raises. For read and write, Target is
// the workspace path as the call names it after every decoding step and
// Resolved the canonical path the call will act on (ChangeSet.Key of
// Target: symlinks inside the workspace resolved); the policy judges both.
// For exec, Argv or Shell is set and Target is the argv joined by spaces
// (or the shell line).
type Act struct {
	Act      policy.Act
	Target   string
	Resolved string
	Argv     []string
	Shell    string
}

// Result is what the model sees, and what the call changed.
type Result struct {
	Content string
	IsError bool
	// Wrote lists the workspace files (root-relative, as the change set
	// keys them) a successful call changed in the change set; the trace
	// records them on the call's tool_result event.
	Wrote []string
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
	// Reads judges a read of each file grep and find come across, as the
	// run's policy would judge a read_file of it; nil judges with the
	// built-in layer alone.
	Reads ReadCheck
}

// ReadCheck decides a read of a workspace file: lexical is the path as
// found, resolved its canonical path (ChangeSet.Key).
type ReadCheck func(lexical, resolved string) policy.Verdict

// Spawner starts a sub-agent and waits for its outcome (implemented by the
// harness).
type Spawner interface {
	Spawn(ctx context.Context, p SpawnParams) (Result, error)
}

// Set builds the full tool set over env; spawner may be nil (no
// spawn_agent tool, e.g. at the depth cap).
func Set(env Env, spawner Spawner) map[string]Tool {
	ts := []Tool{
		NewReadFile(env.Changes, env.Reads), NewListDir(env.Changes, env.Reads), NewFind(env.Changes, env.Reads), NewGrep(env.Changes, env.Reads),
		NewEditFile(env.Changes, env.Reads), NewWriteFile(env.Changes), NewApplyPatch(env.Changes, env.Reads), NewDeleteFile(env.Changes, env.Reads),
		NewRenameFile(env.Changes, env.Reads), NewRun(env.Changes, env.Sandbox, env.Reads), NewFinish(),
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
func pathAct[P any](cs *workspace.ChangeSet, args json.RawMessage, act policy.Act, path func(*P) string) ([]Act, error) {
	var p P
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	if err := requirePath(path(&p)); err != nil {
		return nil, err
	}
	a, err := PathAct(cs, act, path(&p))
	if err != nil {
		return nil, err
	}
	return []Act{a}, nil
}

// withReads appends, after the write acts a tool asks for, a read act of
// the same file for each one whose content the call reveals: an edit
// says whether old occurs, a patch whether its hunks apply, a rename
// moves the content to a name the model may read. So a file the model
// may not read cannot be probed or moved out from under the read rules.
// Writes come first: a denied write stops before a read is asked.
func withReads(writes []Act) []Act {
	out := append([]Act(nil), writes...)
	for _, w := range writes {
		out = append(out, Act{Act: policy.ActRead, Target: w.Target, Resolved: w.Resolved})
	}
	return out
}

// PathAct is the act of reading or writing rel through cs: Target the
// clean path, Resolved where the change set will really read or write it.
// Every workspace tool builds its read and write acts here, from the same
// resolution its action goes through, so the policy judges the file that
// is touched. A path that leaves the workspace is an error.
func PathAct(cs *workspace.ChangeSet, act policy.Act, rel string) (Act, error) {
	clean, err := workspace.CleanPath(rel)
	if err != nil {
		return Act{}, fmt.Errorf("bad path: %w", err)
	}
	resolved, err := cs.Key(clean)
	if err != nil {
		return Act{}, fmt.Errorf("bad path: %w", err)
	}
	return Act{Act: act, Target: clean, Resolved: resolved}, nil
}

func requirePath(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("bad arguments: path is required")
	}
	return nil
}
