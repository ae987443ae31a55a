package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// cmdDiff prints a run's change as a unified diff `git apply` takes
// (git headers, a/ and b/ paths, new and deleted file modes): for a
// pending change, against the workspace as it is now (what approving it
// would write); for an applied one, against the files as they were
// before it (its stored bases), whatever happened to them since.
func cmdDiff(ctx context.Context, env *cliEnv, args []string) int {
	env, _ = guardOutput(env)
	fs := newFlagSet("diff RUN_ID", env.stderr)
	arg, err := parseRunID(fs, args)
	if err != nil {
		return usageError(env, "diff", err)
	}
	id, err := resolveRun(ctx, env, arg)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: %v\n", err)
		return runErrorExit(err)
	}
	cwd, _ := os.Getwd()
	eng, err := wire.NewHarness(ctx, wire.Options{Root: wire.FindRoot(cwd, cwd), Getenv: env.getenv, Logger: cliLogger(env.stderr)})
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: %v\n", err)
		return errorExit(err, exitFailed)
	}
	defer eng.Close()
	hs := eng.Harness.History()
	row, err := hs.Run(ctx, id)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: %v\n", err)
		return errorExit(err, exitFailed)
	}
	if !row.HasChanges() {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: run %s changed no file\n", id)
		return exitOK
	}
	cs, err := hs.Changes(row)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: %v\n", err)
		return exitFailed
	}
	applied := row.Outcome == agent.OutcomeApplied
	var missing []string
	for _, ch := range cs.Changes() {
		if applied && !baseKnown(cs, ch) {
			missing = append(missing, ch.Path)
			continue
		}
		fmt.Fprint(env.stdout, cs.DiffFile(ch.Path))
	}
	if len(missing) > 0 {
		fmt.Fprintf(env.stderr, "ioh-lsp diff: run %s's change is applied, but what %s held before it was not recorded (applied by the editor or an older version), so the diff above leaves out %d of its %d files; `git diff` shows the workspace's own changes\n",
			id, strings.Join(missing, ", "), len(missing), len(cs.Changes()))
		return exitFailed
	}
	return exitOK
}

// baseKnown says whether the change set holds the content ch was based
// on. An applied run's snapshot stores each base's content (for undo),
// and its diff is then the change as applied, against the tree before
// the run; one that stored only their hashes gets the workspace's file
// as a stand-in, whose hash no longer matches.
func baseKnown(cs *workspace.ChangeSet, ch workspace.Change) bool {
	if ch.BaseHash == "" {
		return true // a file the change created
	}
	base, ok := cs.Base(ch.Path)
	sum := sha256.Sum256(base)
	return ok && hex.EncodeToString(sum[:]) == ch.BaseHash
}
