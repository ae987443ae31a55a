package main

import (
	"bytes"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestColourOnATerminal: with stderr on a pseudo-terminal the summary's
// outcome word is coloured (a change left pending: yellow) and so is
// "warning:"; control: with NO_COLOR set no colour is printed (the status
// line's cursor moves stay), on a pipe not one escape. NO_COLOR set but
// empty still colours (https://no-color.org).
func TestColourOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	run := func(onTTY bool, noColor ...string) string {
		t.Helper()
		dir, env := newCrashWorkspace(t)
		cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never")
		cmd.Dir, cmd.Env = dir, append(append(env, "IOH_TEST_MODEL_DELAY=0s"), noColor...)
		if !onTTY {
			var errb strings.Builder
			cmd.Stderr = &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("run: %v\n%s", err, errb.String())
			}
			return errb.String()
		}
		ptmx, tty := openPty(t)
		cmd.Stderr = tty
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close() // the child holds the terminal end now
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { io.Copy(&out, ptmx); close(done) }() // ends with EIO when the child exits
		if err := cmd.Wait(); err != nil {
			t.Fatalf("run: %v", err)
		}
		<-done
		return out.String()
	}
	const pending = "\x1b[33mawaiting_approval\x1b[0m after "
	sgr := regexp.MustCompile(`\x1b\[[0-9;]*m`)
	for name, tt := range map[string]struct {
		tty     bool
		env     []string
		colored bool
	}{
		"terminal":       {tty: true, colored: true},
		"NO_COLOR empty": {tty: true, env: []string{"NO_COLOR="}, colored: true},
		"NO_COLOR=1":     {tty: true, env: []string{"NO_COLOR=1"}},
		"pipe":           {},
	} {
		out := run(tt.tty, tt.env...)
		if !strings.Contains(out, "awaiting_approval") {
			t.Fatalf("%s: no summary:\n%q", name, out)
		}
		if got := strings.Contains(out, pending) && strings.Contains(out, "ioh-lsp: \x1b[33mwarning:\x1b[0m"); got != tt.colored {
			t.Errorf("%s: coloured %v, want %v:\n%q", name, got, tt.colored, out)
		}
		if !tt.colored && sgr.MatchString(out) {
			t.Errorf("%s: a colour printed:\n%q", name, out)
		}
		if !tt.tty && strings.Contains(out, "\x1b[") {
			t.Errorf("%s: an escape sequence printed:\n%q", name, out)
		}
	}
}
