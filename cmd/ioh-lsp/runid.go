package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// workspaceHistory opens the history of the workspace at the cwd (the
// git root above it, else the cwd) for reading (agent.OpenHistory: the
// engine's read API, which a running harness serves too) and returns
// that workspace. A cwd whose workspace would be / or $HOME is refused
// before any store is made for it (config.CheckWorkspace): runs and
// trace there would create one for a directory that is no project.
func workspaceHistory(ctx context.Context, env *cliEnv) (*agent.History, string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	root := wire.FindRoot(cwd, cwd)
	if err := config.CheckWorkspace(root, env.getenv); err != nil {
		return nil, root, fmt.Errorf("%w: %w", agent.ErrConfig, err)
	}
	dir, err := agent.StateDir(env.getenv)
	if err != nil {
		return nil, root, err
	}
	hs, err := agent.OpenHistory(ctx, dir, root)
	if err != nil {
		return nil, root, err
	}
	warnRecovered(env.stderr, hs.Recovered())
	return hs, root, nil
}

// addLast registers --last on a command that takes RUN_ID.
func addLast(fs *flag.FlagSet) *bool {
	return fs.Bool("last", false, "the newest run of the workspace instead of RUN_ID")
}

// parseRunID parses the flags of a command whose one argument is RUN_ID
// (or --last, "" then) and returns that argument.
func parseRunID(fs *flag.FlagSet, args []string) (string, error) {
	last := addLast(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return "", err
	}
	return runArg(pos, *last)
}

// runArg is the RUN_ID of pos, or none with --last; at most one of them.
func runArg(pos []string, last bool) (string, error) {
	switch {
	case last && len(pos) > 0:
		return "", fmt.Errorf("give RUN_ID or --last, not both")
	case !last && len(pos) == 0:
		return "", fmt.Errorf("missing RUN_ID (a run id from `ioh-lsp runs`, a unique prefix of one, or --last)")
	case len(pos) > 1:
		return "", fmt.Errorf("unexpected argument %q", pos[1])
	}
	if last {
		return "", nil
	}
	return pos[0], nil
}

// resolveRun is the id of the workspace's run that arg names: the id
// itself, a unique prefix of one ("r-1a2b", "1a2b"), or, for "" (--last),
// the newest root run. Not found says which workspace was searched.
func resolveRun(ctx context.Context, env *cliEnv, arg string) (string, error) {
	hs, root, err := workspaceHistory(ctx, env)
	if err != nil {
		return "", err
	}
	defer hs.Close()
	runs, err := hs.Runs(ctx)
	if err != nil {
		return "", err
	}
	return pickRun(runs, arg, root)
}

// pickRun resolves arg among runs (resolveRun).
func pickRun(runs []*agent.StoredRun, arg, root string) (string, error) {
	where := fmt.Sprintf("in the workspace %s (`ioh-lsp runs` lists them; a run is kept by the workspace it ran in: cd there)", root)
	if arg == "" {
		var newest *agent.StoredRun
		for _, r := range runs {
			if r.Parent == "" && (newest == nil || !r.Started.Before(newest.Started)) {
				newest = r
			}
		}
		if newest == nil {
			return "", fmt.Errorf("--last: %w: no runs %s", agent.ErrNotFound, where)
		}
		return newest.RunID, nil
	}
	var matches []string
	for _, r := range runs {
		if r.RunID == arg {
			return r.RunID, nil
		}
		if strings.HasPrefix(r.RunID, arg) || strings.HasPrefix(r.RunID, "r-"+arg) {
			matches = append(matches, r.RunID)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("run %s: %w %s", arg, agent.ErrNotFound, where)
	}
	sort.Strings(matches)
	if len(matches) > 5 {
		matches = append(matches[:5], "…")
	}
	return "", fmt.Errorf("run %s: %w: the prefix names %s; give more of the id", arg, errAmbiguous, strings.Join(matches, ", "))
}

// errAmbiguous: a run id prefix names several runs (a usage error).
var errAmbiguous = errors.New("ambiguous run id")

// runErrorExit is errorExit for a command that names a run: an
// ambiguous prefix is a usage error too.
func runErrorExit(err error) int {
	if errors.Is(err, errAmbiguous) {
		return exitUsage
	}
	return errorExit(err, exitFailed)
}
