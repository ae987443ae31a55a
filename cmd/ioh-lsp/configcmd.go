package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// cmdConfig prints the merged configuration of the workspace at the
// current directory, each key with the layer its value comes from, and
// the values that were ignored (with the warning naming the fix).
func cmdConfig(_ context.Context, env *cliEnv, args []string) int {
	env, _ = guardOutput(env)
	fs := newFlagSet("config", env.stderr)
	asJSON := fs.Bool("json", false, "print the settings as a JSON array")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 0, 0)
	}
	if err != nil {
		return usageError(env, "config", err)
	}
	cwd, _ := os.Getwd()
	root := wire.FindRoot(cwd, cwd)
	if config.CheckWorkspace(root, env.getenv) != nil {
		root = "" // no workspace layer for / or $HOME, as no run gets one
	}
	cfg, settings, err := config.Provenance(config.LoadOptions{WorkspaceRoot: root, Getenv: env.getenv})
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp config: %v\n", err)
		return exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(settings); err != nil {
			return exitFailed
		}
		return exitOK
	}
	userPath := config.UserPath(env.getenv)
	w := env.stdout
	fmt.Fprintf(w, "layers, low to high:\n  user       %s%s\n  editor     not applicable on the command line (an editor's `ioh` settings)\n", userPath, absent(userPath))
	if root != "" {
		ws := config.WorkspacePath(cfg.WorkspaceRoot)
		trust := "trusted"
		if !cfg.WorkspaceTrusted {
			trust = fmt.Sprintf("not trusted: what it may not choose is ignored; list %s under `trusted:` in %s to honour it", cfg.WorkspaceRoot, userPath)
		}
		fmt.Fprintf(w, "  workspace  %s%s (%s)\n", ws, absent(ws), trust)
	} else {
		fmt.Fprintf(w, "  workspace  none (%s is no project directory)\n", cwd)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, s := range settings {
		from := s.Layer
		if s.Source != "" && s.Layer != config.LayerDefault {
			from += " (" + s.Source + ")"
		}
		v := s.Value
		if v == "" && s.Layer == config.LayerDefault {
			v = "(not set)"
		}
		for _, ig := range s.Ignored {
			from += fmt.Sprintf("; %s's %s ignored", ig.Layer, oneLine(ig.Value, 40))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, oneLine(v, 60), from)
	}
	tw.Flush()
	if len(cfg.Warnings) > 0 {
		fmt.Fprintln(w, "\nignored:")
		for _, warn := range cfg.Warnings {
			fmt.Fprintf(w, "  %s\n", warn)
		}
	}
	return exitOK
}

// absent marks a layer file that does not exist.
func absent(path string) string {
	if _, err := os.Stat(path); err != nil {
		if strings.Contains(path, ".ioh") {
			return " (absent)"
		}
		return " (absent: ioh-lsp init writes it)"
	}
	return ""
}
