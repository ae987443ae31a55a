package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHelpBinary: every command's --help, through the built binary, has a
// usage line with its positionals, flags written with double dashes (never
// Go's -approve), examples and the environment; run's lists the exit codes
// docs/cli.md's table lists, no more, no fewer. A missing positional is
// named with the usage line after it; `ioh-lsp help` aligns every summary.
func TestHelpBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	help := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String() + errb.String(), code
	}
	for _, tt := range []struct {
		args  []string
		usage string
		flag  string
	}{
		{[]string{"run", "--help"}, "usage: ioh-lsp run [flags] FILE\n", "\n  --approve MODE\n"},
		{[]string{"grep", "--help"}, "usage: ioh-lsp grep [flags] PATTERN [DIR]\n", "\n  --glob GLOB\n"},
		{[]string{"find", "-h"}, "usage: ioh-lsp find [flags] GLOB [DIR]\n", "\n  -h, --help\n"},
		{[]string{"resume", "--help"}, "usage: ioh-lsp resume [flags] RUN_ID|--last\n", "\n  --budget-usd "},
		{[]string{"sandbox", "run", "--help"}, "usage: ioh-lsp sandbox run [flags] -- COMMAND [ARG...]\n", "\n  --net\n"},
		{[]string{"approve", "--help"}, "usage: ioh-lsp approve [flags] RUN_ID|--last\n", "\n  --last\n"},
	} {
		out, code := help(tt.args...)
		if code != 0 || !strings.HasPrefix(out, tt.usage) || !strings.Contains(out, tt.flag) {
			t.Errorf("%v: exit %d, want 0, %q first and %q in:\n%s", tt.args, code, tt.usage, tt.flag, out)
		}
		if m := regexp.MustCompile(`(?m)^  -[a-z][a-z-]+`).FindString(out); m != "" {
			t.Errorf("%v: a flag printed with one dash: %q", tt.args, m)
		}
		if ex := strings.SplitN(out, "\nexamples:\n", 2); len(ex) != 2 || strings.Count(strings.SplitN(ex[1], "\n\n", 2)[0], "\n  ioh-lsp ")+1 < 2 {
			t.Errorf("%v: want at least two examples in:\n%s", tt.args, out)
		}
	}
	// A flag's value is named as docs/cli.md names it (--approve MODE),
	// never by its Go type (--approve string).
	for _, args := range [][]string{{"serve"}, {"acp"}, {"run"}, {"resume"}, {"reject"}, {"ask"}, {"demo"}, {"init"}, {"sandbox", "run"}} {
		out, _ := help(append(args, "--help")...)
		if m := regexp.MustCompile(`(?m)^  --[a-z-]+ (string|int|int64|float|float64|duration|value|uint)$`).FindString(out); m != "" {
			t.Errorf("%v --help: a flag's value named by its type: %q", args, m)
		}
	}
	out, _ := help("run", "--help")
	for _, v := range []string{"IOH_STATE_DIR", "XDG_CONFIG_HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "NO_COLOR"} {
		if !strings.Contains(out, "\n  "+v+" ") {
			t.Errorf("run --help does not list %s", v)
		}
	}
	if got, want := helpExitCodes(t, out), docExitCodes(t); !slices.Equal(got, want) {
		t.Errorf("run --help lists exit codes %v, docs/cli.md %v", got, want)
	}

	out, code := help("grep")
	if code != exitUsage || !strings.HasPrefix(out, "ioh-lsp grep: missing PATTERN\nusage: ioh-lsp grep [flags] PATTERN [DIR]\n") {
		t.Errorf("grep without PATTERN: exit %d, stderr %q", code, out)
	}
	out, _ = help("help")
	col := -1
	for _, line := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(line, "  "), " "); ok && strings.HasPrefix(line, "  ") && name != "" {
			at := len(line) - len(strings.TrimLeft(line[2+len(name):], " "))
			if col == -1 {
				col = at
			} else if at != col {
				t.Errorf("help: %q starts its summary at column %d, the first at %d", line, at, col)
			}
		}
	}
	if !strings.Contains(out, "\n  completion  print") {
		t.Errorf("help: completion runs into its summary:\n%s", out)
	}
}

// helpExitCodes are the codes of run --help's "exit codes:" section.
func helpExitCodes(t *testing.T, out string) []int {
	_, sec, ok := strings.Cut(out, "\nexit codes:\n")
	if !ok {
		t.Fatalf("no exit codes in:\n%s", out)
	}
	sec, _, _ = strings.Cut(sec, "\n\n")
	var codes []int
	for _, line := range strings.Split(sec, "\n") {
		n, err := strconv.Atoi(strings.Fields(line)[0])
		if err != nil {
			t.Fatalf("exit code line %q", line)
		}
		codes = append(codes, n)
	}
	return codes
}

// docExitCodes are the codes of docs/cli.md's exit-code table.
func docExitCodes(t *testing.T) []int {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "### Exit codes of run and resume")
	if !ok {
		t.Fatal("docs/cli.md has no exit-code table")
	}
	var codes []int
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\d+)` \\|").FindAllStringSubmatch(strings.SplitN(sec, "\n#", 2)[0], -1) {
		n, _ := strconv.Atoi(m[1])
		codes = append(codes, n)
	}
	return codes
}
