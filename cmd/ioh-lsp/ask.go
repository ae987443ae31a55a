package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdAsk runs a goal without a task file: an inline contract whose checks
// are the project's own test command (as init's starter task and the
// editor's "Ask agent"), in the workspace of the current directory, with
// run's flags and exit codes.
func cmdAsk(ctx context.Context, env *cliEnv, args []string) int {
	env, g := guardOutput(env)
	f, pos, code, ok := parseRunArgs(env, "ask", "GOAL", args)
	if !ok {
		return code
	}
	cwd, _ := os.Getwd()
	root := wire.FindRoot(cwd, cwd)
	c, err := goalContract(pos[0], root)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp ask: %v\n", err)
		return exitUsage
	}
	if len(c.Verify.Checks) == 0 {
		fmt.Fprintf(env.stderr, "ioh-lsp ask: no checks detected in %s (no go.mod, Cargo.toml, package.json, pyproject.toml, setup.py or pytest.ini): the run will be unverified; write a task file with verify.checks (ioh-lsp init starts one) to prove it\n", root)
	}
	return drive(ctx, env, g, f, root, func(ctx context.Context, h *agent.Harness) (*agent.Run, error) {
		return h.Start(ctx, c)
	})
}

// goalContract is the inline contract of goal in the workspace root: the
// goal and the project's detected checks, every other field its default.
func goalContract(goal, root string) (*contract.Contract, error) {
	if strings.TrimSpace(goal) == "" {
		return nil, fmt.Errorf("the goal is empty: say what to do, as in ioh-lsp ask \"fix the failing test in parse.go\"")
	}
	doc := map[string]any{"version": 1, "goal": goal}
	if checks := contract.ProjectChecks(root); len(checks) > 0 {
		doc["verify"] = map[string]any{"checks": checks}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return contract.Parse(raw, "ask")
}
