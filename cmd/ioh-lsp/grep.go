package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// cmdGrep is `ioh-lsp grep PATTERN [DIR] [-F] [-i] [--glob G]... [--max N]`:
// the agent's search tool from the shell. Paths print relative to DIR.
// When the server has left an index of DIR in the state directory, files
// whose stamps match it and that cannot match are skipped unread.
// Exit 0 when something matched, 1 when nothing did, 2 on error.
func cmdGrep(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("grep", env.stderr)
	literal := fs.Bool("F", false, "treat PATTERN as a literal string, not a regular expression")
	fold := fs.Bool("i", false, "case-insensitive")
	var globs stringList
	fs.Var(&globs, "glob", "only search files matching `GLOB` (\"!GLOB\" excludes); repeatable")
	max := fs.Int("max", 0, "stop after `N` matching lines (0: no limit)")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 1, 2)
	}
	if err == nil && *max < 0 {
		err = fmt.Errorf("--max must not be negative")
	}
	if err != nil {
		return usageError(env, "grep", err)
	}
	dir, sub := ".", ""
	if len(pos) == 2 {
		dir = pos[1]
		// A single file is searched from its directory, as rg allows.
		if fi, err := os.Stat(dir); err == nil && fi.Mode().IsRegular() {
			dir, sub = filepath.Dir(dir), filepath.Base(dir)
		}
	}
	root, err := workspace.NewRoot(dir)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp grep: %v\n", err)
		return exitUsage
	}
	if state, err := agent.StateDir(env.getenv); err == nil {
		if x, err := workspace.OpenIndex(root, workspace.IndexOptions{StateDir: state}); err == nil {
			defer x.Close()
		}
	}
	matches, err := root.Grep(ctx, workspace.GrepOptions{
		Pattern: pos[0], Literal: *literal, IgnoreCase: *fold, Globs: globs, Max: *max, Dir: sub,
	})
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp grep: %v\n", err)
		return exitUsage
	}
	w := bufio.NewWriterSize(env.stdout, 64<<10)
	var num []byte
	for _, m := range matches {
		w.WriteString(m.Path)
		w.WriteByte(':')
		num = strconv.AppendInt(num[:0], int64(m.Line), 10)
		w.Write(num)
		w.WriteByte(':')
		w.WriteString(m.Text)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp grep: %v\n", err)
		return exitUsage
	}
	if len(matches) == 0 {
		return exitFailed
	}
	return exitOK
}

// cmdFind is `ioh-lsp find GLOB [DIR]`: one relative path a line,
// gitignore-aware. Exit 0 when something matched, 1 when nothing did, 2 on
// error.
func cmdFind(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("find", env.stderr)
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 1, 2)
	}
	if err != nil {
		return usageError(env, "find", err)
	}
	dir := "."
	if len(pos) == 2 {
		dir = pos[1]
	}
	root, err := workspace.NewRoot(dir)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp find: %v\n", err)
		return exitUsage
	}
	paths, err := root.Find(ctx, pos[0])
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp find: %v\n", err)
		return exitUsage
	}
	w := bufio.NewWriterSize(env.stdout, 64<<10)
	for _, p := range paths {
		w.WriteString(p)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp find: %v\n", err)
		return exitUsage
	}
	if len(paths) == 0 {
		return exitFailed
	}
	return exitOK
}
