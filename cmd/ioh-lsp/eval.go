package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/generate"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/report"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/runner"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/suite"
)

// cmdEval runs a suite (docs/eval.md): every (task, variant, repeat) cell
// in its own copy of the task's workspace, nothing ever applied; `eval
// merge` combines shards' results; `eval generate` makes a suite by
// mutating a repository's tested code.
func cmdEval(ctx context.Context, env *cliEnv, args []string) int {
	env, _ = guardOutput(env) // the environment's secrets never printed
	if len(args) > 0 {
		switch args[0] {
		case "merge":
			return cmdEvalMerge(env, args[1:])
		case "generate":
			return cmdEvalGenerate(ctx, env, args[1:])
		}
	}
	fs := newFlagSet("eval SUITE", env.stderr)
	var variants stringList
	fs.Var(&variants, "variant", "run only this variant (repeatable, or comma-separated)")
	repeat := fs.Int("repeat", 1, "run every (task, variant) this many times")
	parallel := fs.Int("parallel", 2, "cells run at once")
	out := fs.String("out", "eval-out", "output directory: results.jsonl, report.md, report.html, traces")
	shard := fs.String("shard", "", "run the slice i/N of the cells (N alone: i from JOB_COMPLETION_INDEX)")
	keep := fs.Bool("keep", false, "keep each cell's workspace copy under OUT/work")
	noTiming := fs.Bool("no-timing", false, "leave wall times out of the report")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 1, 1)
	}
	if err == nil && (*repeat < 1 || *parallel < 1) {
		err = errors.New("--repeat and --parallel must be at least 1")
	}
	var sh runner.Shard
	if err == nil {
		sh, err = runner.ParseShard(*shard, env.getenv)
	}
	if err != nil {
		return usageError(env, "eval", err)
	}
	s, err := suite.Load(pos[0])
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp eval: %v\n", err)
		return exitUsage
	}
	var names []string
	for _, v := range variants {
		names = append(names, strings.Split(v, ",")...)
	}
	if _, err := runner.Select(s, names); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp eval: %v\n", err)
		return exitUsage
	}
	sum, err := runner.Run(ctx, runner.Options{
		Suite: s, Variants: names, Repeat: *repeat, Parallel: *parallel, Out: *out, Shard: sh,
		Getenv: env.getenv, Progress: &lockedWriter{w: env.stderr}, Keep: *keep,
	})
	if sum.Done > 0 {
		fmt.Fprintf(env.stderr, "ioh-lsp eval: %d of the %d cells were already in %s, not run again\n", sum.Done, sum.Planned, sum.Results)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp eval: %v\n", err)
		if ctx.Err() != nil {
			return exitCancelled
		}
		return exitFailed
	}
	return writeReport(env, filepath.Dir(sum.Results), []string{sum.Results}, report.Options{Title: "Evaluation of " + s.Name, NoTiming: *noTiming})
}

// cmdEvalMerge combines results files (or directories holding one) into
// one results file and report.
func cmdEvalMerge(env *cliEnv, args []string) int {
	fs := newFlagSet("eval merge RESULTS...", env.stderr)
	out := fs.String("out", "eval-merged", "output directory: the merged results.jsonl, report.md, report.html")
	title := fs.String("title", "Evaluation", "the report's title")
	noTiming := fs.Bool("no-timing", false, "leave wall times out of the report")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 1, -1)
	}
	if err != nil {
		return usageError(env, "eval merge", err)
	}
	var paths []string
	for _, p := range pos {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, result.FileName)
		}
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(env.stderr, "ioh-lsp eval merge: %v\n", err)
			return exitUsage
		}
		paths = append(paths, p)
	}
	cells, err := result.Merge(paths...)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp eval merge: %v\n", err)
		return exitUsage
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp eval merge: %v\n", err)
		return exitFailed
	}
	merged := filepath.Join(*out, result.FileName)
	f, err := os.Create(merged + ".tmp")
	if err == nil {
		err = errors.Join(result.WriteAll(f, cells), f.Close())
	}
	if err == nil {
		err = os.Rename(merged+".tmp", merged)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp eval merge: %v\n", err)
		return exitFailed
	}
	return writeReport(env, *out, []string{merged}, report.Options{Title: *title, NoTiming: *noTiming})
}

// writeReport renders the results into dir's report files and prints the
// Markdown.
func writeReport(env *cliEnv, dir string, results []string, o report.Options) int {
	cells, err := result.Merge(results...)
	if err == nil {
		var md string
		if md, err = report.Write(dir, cells, o); err == nil {
			fmt.Fprint(env.stdout, md)
			fmt.Fprintf(env.stderr, "ioh-lsp eval: %d cells; report in %s and %s\n", len(cells),
				filepath.Join(dir, report.MarkdownFile), filepath.Join(dir, report.HTMLFile))
			return exitOK
		}
	}
	fmt.Fprintf(env.stderr, "ioh-lsp eval: %v\n", err)
	return exitFailed
}

// cmdEvalGenerate makes a suite from a Go repository by mutating its
// tested code (docs/eval.md#generated-suites).
func cmdEvalGenerate(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlagSet("eval generate REPO", env.stderr)
	var pkgs stringList
	fs.Var(&pkgs, "packages", "go list patterns relative to REPO (repeatable, or comma-separated; default ./...)")
	count := fs.Int("count", 10, "tasks to make")
	seed := fs.Int64("seed", 1, "the seed of the mutations' order (the same seed gives the same suite)")
	out := fs.String("out", "eval-suite", "the suite directory to write")
	cassettes := fs.Bool("cassettes", false, "also write replay cassettes of two variants (restore, noop) for offline runs")
	maxTries := fs.Int("max-tries", 0, "mutations to try at most (default 10 × --count)")
	verbose := fs.Bool("verbose", false, "print every mutation tried")
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = wantArgs(pos, 1, 1)
	}
	if err == nil && (*count < 1 || *maxTries < 0) {
		err = errors.New("--count must be at least 1 and --max-tries not negative")
	}
	if err != nil {
		return usageError(env, "eval generate", err)
	}
	var patterns []string
	for _, p := range pkgs {
		patterns = append(patterns, strings.Split(p, ",")...)
	}
	o := generate.Options{Repo: pos[0], Packages: patterns, Count: *count, Seed: *seed, Out: *out, Cassettes: *cassettes, MaxTries: *maxTries}
	if *verbose {
		o.Log = env.stderr
	}
	tasks, err := generate.Generate(ctx, o)
	if err != nil {
		fmt.Fprintf(env.stderr, "ioh-lsp eval generate: %v\n", err)
		return exitFailed
	}
	for _, t := range tasks {
		fmt.Fprintf(env.stdout, "%s: %s:%d %s %q → %q; fails %s\n", t.ID, t.Rel, t.Site.Line, t.Site.Kind, t.Site.Old, t.Site.New, strings.Join(t.Tests, ", "))
	}
	fmt.Fprintf(env.stderr, "ioh-lsp eval generate: %d tasks in %s; run them: ioh-lsp eval %s\n", len(tasks), *out, filepath.Join(*out, suite.FileName))
	return exitOK
}
