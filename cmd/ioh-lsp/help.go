package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
)

// helpText is what a command's --help shows besides its flags: the
// positionals of its usage line, examples, the environment variables it
// reads and whether the exit-code table applies (docs/cli.md#commands).
type helpText struct {
	args     string
	examples []string
	env      []string
	exits    bool
}

// helpTable is each command's help, keyed by its name as helpName gives
// it; built on first use (nothing allocates while the binary starts).
var helpTable = sync.OnceValue(func() map[string]helpText {
	// what a command that talks to a model reads, and one that reads the
	// trace store
	envRun := []string{"IOH_STATE_DIR", "XDG_CONFIG_HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "NO_COLOR"}
	envStore := []string{"IOH_STATE_DIR", "XDG_CONFIG_HOME"}
	return map[string]helpText{
		"serve":  {examples: []string{"ioh-lsp serve --log-level debug   # what an editor starts"}, env: envRun},
		"acp":    {examples: []string{"ioh-lsp acp   # what an ACP client (Zed, …) starts"}, env: envRun},
		"init":   {examples: []string{"ioh-lsp init", "ioh-lsp init --provider openai", "ioh-lsp init --force   # replace, keeping the old file as .bak"}, env: []string{"XDG_CONFIG_HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"}},
		"config": {examples: []string{"ioh-lsp config", "ioh-lsp config --json"}, env: envStore},
		"run": {args: "FILE", exits: true, env: envRun, examples: []string{
			"ioh-lsp run .ioh/tasks/check.yaml",
			"ioh-lsp run task.ioh.yaml --approve never --json > events.jsonl",
			"ioh-lsp run task.ioh.yaml --cassette demo.json   # offline replay"}},
		"ask": {args: "GOAL", exits: true, env: envRun, examples: []string{
			`ioh-lsp ask "make the failing test in parser_test.go pass"`,
			`ioh-lsp ask "add a --verbose flag" --approve never`}},
		"resume": {args: "RUN_ID|--last", exits: true, env: envRun, examples: []string{
			"ioh-lsp resume --last",
			"ioh-lsp resume r-4f2a --budget-usd 2"}},
		"runs":    {examples: []string{"ioh-lsp runs", "ioh-lsp runs --json"}, env: envStore},
		"trace":   {args: "RUN_ID|--last", examples: []string{"ioh-lsp trace --last", "ioh-lsp trace r-4f2a --json"}, env: envStore},
		"diff":    {args: "RUN_ID|--last", examples: []string{"ioh-lsp diff --last", "ioh-lsp diff r-4f2a | git apply"}, env: envStore},
		"approve": {args: "RUN_ID|--last", examples: []string{"ioh-lsp approve --last", "ioh-lsp approve r-4f2a --for-run"}, env: envStore},
		"reject":  {args: "RUN_ID|--last", examples: []string{"ioh-lsp reject --last", `ioh-lsp reject r-4f2a --reason "keep the old API"`}, env: envStore},
		"undo":    {args: "RUN_ID|--last", examples: []string{"ioh-lsp undo --last", "ioh-lsp undo r-4f2a"}, env: envStore},
		"sandbox run": {args: "-- COMMAND [ARG...]", examples: []string{
			"ioh-lsp sandbox run -- go test ./...",
			"ioh-lsp sandbox run --net --timeout 2m -- npm ci"}},
		"sandbox doctor": {examples: []string{"ioh-lsp sandbox doctor", "ioh-lsp sandbox doctor --json"}},
		"grep": {args: "PATTERN [DIR]", examples: []string{
			`ioh-lsp grep 'func New' ./agent`,
			`ioh-lsp grep -F -i todo --glob '*.go'`,
			`ioh-lsp grep Error --glob '!*_test.go' --max 20`}, env: []string{"IOH_STATE_DIR"}},
		"find": {args: "GLOB [DIR]", examples: []string{
			`ioh-lsp find '*.go'`,
			`ioh-lsp find '**/testdata/*' ./agent`}},
		"eval": {args: "SUITE", env: append(envRun[:len(envRun):len(envRun)], "JOB_COMPLETION_INDEX"), examples: []string{
			"ioh-lsp eval examples/eval/suite.yaml --repeat 2 --parallel 2 --out eval-out",
			"ioh-lsp eval suite.yaml --shard 4 --out /results   # index from JOB_COMPLETION_INDEX"}},
		"eval merge": {args: "RESULTS...", examples: []string{
			"ioh-lsp eval merge shard-*/results.jsonl --out merged"}},
		"eval generate": {args: "REPO", examples: []string{
			"ioh-lsp eval generate . --packages ./parser,./lexer --count 20 --seed 7 --out suite",
			"ioh-lsp eval generate ~/src/lib --count 5 --cassettes --out /tmp/lib-suite"}},
		"demo":       {examples: []string{"ioh-lsp demo", "ioh-lsp demo --keep --verbose"}},
		"completion": {args: "bash|zsh|fish", examples: []string{"source <(ioh-lsp completion bash)", "ioh-lsp completion fish > ~/.config/fish/completions/ioh-lsp.fish"}},
		"man":        {examples: []string{"ioh-lsp man | man -l -"}},
		"version":    {examples: []string{"ioh-lsp version"}},
	}
})

// envDoc says what an environment variable does.
func envDoc(name string) string {
	switch name {
	case "IOH_STATE_DIR":
		return "where runs and traces are kept (absolute; default $XDG_STATE_HOME/ioh, else ~/.local/state/ioh)"
	case "XDG_CONFIG_HOME":
		return "the user config is $XDG_CONFIG_HOME/ioh/config.yaml (default ~/.config/ioh/config.yaml)"
	case "ANTHROPIC_API_KEY":
		return "the anthropic provider's key"
	case "OPENAI_API_KEY":
		return "the openai provider's key"
	case "OPENROUTER_API_KEY":
		return "the openrouter provider's key"
	case "NO_COLOR":
		return "set and not empty: no colour on a terminal"
	case "JOB_COMPLETION_INDEX":
		return "the shard index of --shard N (a Kubernetes Indexed Job sets it)"
	}
	return ""
}

// helpName is the command a flag set belongs to: its leading words of
// lower-case letters ("run FILE" → "run", "sandbox run" stays,
// "completion bash|zsh|fish" → "completion").
func helpName(fsName string) string {
	var words []string
	for _, w := range strings.Fields(fsName) {
		if strings.Trim(w, "abcdefghijklmnopqrstuvwxyz-") != "" {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// usageLine is a command's usage: its name, [flags], its positionals.
func usageLine(fsName string) string {
	name := helpName(fsName)
	args := helpTable()[name].args
	if args == "" {
		args = strings.TrimSpace(strings.TrimPrefix(fsName, name))
	}
	return strings.TrimSpace("usage: ioh-lsp " + name + " [flags] " + args)
}

// printHelp is a command's --help: usage line, flags with double dashes,
// examples, exit codes, environment.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	h := helpTable()[helpName(fs.Name())]
	fmt.Fprintln(w, usageLine(fs.Name()))
	fmt.Fprintln(w, "\nflags:")
	printFlags(w, fs)
	fmt.Fprintln(w, "  -h, --help\n      show this help")
	if len(h.examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range h.examples {
			fmt.Fprintln(w, "  "+e)
		}
	}
	if h.exits {
		fmt.Fprintln(w, "\nexit codes:")
		for _, e := range exitCodes {
			fmt.Fprintf(w, "  %-4d %s\n", e.code, e.what)
		}
	}
	if len(h.env) > 0 {
		fmt.Fprintln(w, "\nenvironment:")
		width := 19
		for _, v := range h.env {
			width = max(width, len(v))
		}
		for _, v := range h.env {
			fmt.Fprintf(w, "  %-*s %s\n", width, v, envDoc(v))
		}
	}
}

// printFlags is flag.PrintDefaults with the flags written as docs/cli.md
// writes them: --name, and -F for a one-letter name.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		line := "  " + dash(f.Name)
		if arg != "" {
			line += " " + arg
		}
		if !zeroDefault(f) {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				text += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				text += fmt.Sprintf(" (default %v)", f.DefValue)
			}
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, strings.ReplaceAll(text, "\n", "\n      "))
	})
}

// zeroDefault reports whether f's default is its type's zero value (not
// worth printing), as the flag package decides it.
func zeroDefault(f *flag.Flag) (zero bool) {
	defer func() {
		if recover() != nil {
			zero = false
		}
	}()
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String()
}

// missingArg is wantArgs's error when a positional is missing; usageError
// names the argument from the command's usage line.
type missingArg struct{ got int }

func (e missingArg) Error() string {
	return fmt.Sprintf("missing argument (want at least %d, got %d)", e.got+1, e.got)
}

// missingArgText is err's message with the missing positional named and
// the usage line after it, when err is a missingArg of cmd.
func missingArgText(cmd string, err error) (string, bool) {
	var m missingArg
	if !errors.As(err, &m) {
		return "", false
	}
	line := usageLine(cmd)
	if h, ok := helpTable()[cmd]; ok && h.args != "" {
		var names []string
		for _, a := range strings.Fields(h.args) {
			if a != "--" && !strings.HasPrefix(a, "[") {
				names = append(names, a)
			}
		}
		if m.got < len(names) {
			return fmt.Sprintf("missing %s\n%s\n(ioh-lsp %s --help shows the flags and examples)", names[m.got], line, cmd), true
		}
	}
	return fmt.Sprintf("%v\n%s", err, line), true
}
