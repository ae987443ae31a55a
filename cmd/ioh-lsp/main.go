// Command ioh-lsp is a language server that runs an AI coding agent from a
// typed task contract to a verified result, in any LSP editor and headless
// from a shell.
//
// This file is the entry point: main runs a re-executed sandbox stage when
// it is one, else dispatches the sub-command; each command lives in a file
// named after it. The packages are wired together by internal/wire
// (NewHarness) for run, resume, serve and acp. The data path of one task,
// function by function: docs/architecture.md#one-task-end-to-end.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/suggest"
)

// command is one sub-command of the binary.
type command struct {
	name    string
	summary string
	// run executes the command with its arguments (the command name removed)
	// and returns the process exit code.
	run func(ctx context.Context, env *cliEnv, args []string) int
}

// commands is the dispatch table; each entry's implementation lives in its
// own file named after the command.
var commands = []command{
	{"serve", "LSP over stdio (the default)", cmdServe},
	{"acp", "Agent Client Protocol agent over stdio", cmdAcp},
	{"init", "write a user config and a starter task file", cmdInit},
	{"config", "show the merged configuration and where each value comes from", cmdConfig},
	{"run", "run a task contract headless", cmdRun},
	{"ask", "run a goal without a task file, verified by the project's tests", cmdAsk},
	{"resume", "continue an interrupted or deferred run", cmdResume},
	{"runs", "list runs", cmdRuns},
	{"trace", "print a run's trace", cmdTrace},
	{"diff", "print a run's change as a unified diff (git apply takes it)", cmdDiff},
	{"approve", "apply a pending verified change", cmdApprove},
	{"reject", "drop a pending verified change", cmdReject},
	{"undo", "revert an applied change, keeping later edits", cmdUndo},
	{"sandbox", "run a command contained (run) or probe the sandbox (doctor)", cmdSandbox},
	{"grep", "search the workspace (gitignore-aware)", cmdGrep},
	{"find", "list workspace files matching a glob", cmdFind},
	{"demo", "drive a real LSP session offline on a bundled example", cmdDemo},
	{"eval", "run a suite of tasks and report pass rates, costs and comparisons", cmdEval},
	{"completion", "print a shell completion script (bash, zsh, fish)", cmdCompletion},
	{"man", "print the manual page (roff)", cmdMan},
	{"version", "print version information", cmdVersion},
}

// cliEnv carries the process's standard streams and environment so commands
// are testable in-process.
type cliEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

func main() {
	if maybeSandboxInit() {
		return // unreachable: the sandbox init child exits on its own
	}
	env := &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	args := os.Args[1:]
	if finishesAtOnce(args) {
		os.Exit(dispatch(context.Background(), env, args))
	}
	// A reader that goes away (`ioh-lsp run ... | head -3`) must not stop
	// a run: with SIGPIPE ignored a write to the closed pipe fails with
	// EPIPE, which the progress output ignores, instead of killing the
	// process mid-run.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, env, args)
	stop()
	os.Exit(code)
}

// finishesAtOnce reports whether args name a command that only prints and
// has nothing to cancel (version, help). main runs it without installing
// the interrupt handlers: signal.Notify starts two threads, a cost every
// other command needs and these do not (bench/startup.sh).
func finishesAtOnce(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "version", "--version", "-version", "help", "-h", "--help":
		return true
	}
	return false
}

// dispatch picks the sub-command; no arguments means serve.
func dispatch(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		if approve.IsTerminal(env.stdin) {
			// A person typed `ioh-lsp`: an editor starts it over pipes.
			// Waiting silently for LSP frames would look hung.
			fmt.Fprintln(env.stderr, "ioh-lsp is a language server: an editor starts it (ioh-lsp serve) over pipes.\nFrom a shell: ioh-lsp run TASK.ioh.yaml, ioh-lsp demo, ioh-lsp help for every command.")
			usage(env.stderr)
			return exitUsage
		}
		return cmdServe(ctx, env, nil)
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		usage(env.stdout)
		return 0
	case "--version", "-version":
		return cmdVersion(ctx, env, nil)
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, env, args[1:])
		}
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	if s := suggest.Nearest(name, names); s != "" {
		fmt.Fprintf(env.stderr, "ioh-lsp: unknown command %q; did you mean %q? (ioh-lsp help lists the commands)\n", name, s)
		return exitUsage
	}
	fmt.Fprintf(env.stderr, "ioh-lsp: unknown command %q (try 'ioh-lsp help')\n", name)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ioh-lsp [command] [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\n'ioh-lsp COMMAND --help' shows a command's flags, examples and environment.")
}

// Exit codes shared by the commands (docs/cli.md#exit-codes-of-run-and-resume;
// 6, interrupted, comes from agent.Outcome.ExitCode).
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitBudget    = 3
	exitDeferred  = 4
	exitProvider  = 5
	exitCancelled = 130
)

// usageError prints a one-line usage error and returns exit code 2.
func usageError(env *cliEnv, cmd string, err error) int {
	var he helpRequested
	if errors.As(err, &he) {
		return exitOK
	}
	if text, ok := missingArgText(cmd, err); ok {
		fmt.Fprintf(env.stderr, "ioh-lsp %s: %s\n", cmd, text)
		return exitUsage
	}
	fmt.Fprintf(env.stderr, "ioh-lsp %s: %v\n", cmd, err)
	return exitUsage
}
