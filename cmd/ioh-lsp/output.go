package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// The commands that show a run (run, resume, runs, trace, approve,
// reject) print through one door: every byte they write to stdout and
// stderr (progress, --json events, the summary, prompts, errors, the log)
// passes outGuard.clean, which redacts every secret the trace store
// redacts and, on what a person reads in a terminal, makes control
// characters visible. A new event type or message cannot forget it.

// outGuard redacts what a command prints. Safe for concurrent use.
type outGuard struct {
	mu     sync.Mutex
	reds   []redact.Redactor
	stdout *guardedWriter
}

// guardOutput returns env with stdout and stderr going through a guard
// that redacts the environment's secrets (wire.Secrets, the same values
// the trace store is opened with). stderr is always read by a person, so
// its control characters are neutralised; stdout is too until
// printsJSON says it carries JSON (whose encoder escapes them).
func guardOutput(env *cliEnv) (*cliEnv, *outGuard) {
	g := &outGuard{reds: []redact.Redactor{redact.New(wire.Secrets(env.getenv, os.Environ))}}
	g.stdout = &guardedWriter{g: g, w: env.stdout, terminal: true}
	out := *env
	out.stdout = g.stdout
	out.stderr = &guardedWriter{g: g, w: env.stderr, terminal: true, colour: wantColour(env.stderr, env.getenv)}
	return &out, g
}

// printsJSON says stdout carries JSON from now on: redacted, with
// control characters left to the JSON encoder's escapes.
func (g *outGuard) printsJSON(on bool) {
	g.stdout.mu.Lock()
	defer g.stdout.mu.Unlock()
	g.stdout.terminal = !on
}

// add makes g redact what r redacts too (the harness's redactor, which
// learns the credentials of the URLs a contract configures).
func (g *outGuard) add(r redact.Redactor) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reds = append(g.reds, r)
}

// addConfigured makes g redact the credentials in every URL of v (the
// layered configuration: base_url passwords, ?api_key= parameters) and
// returns v as JSON, for the harness (Harness.AddConfigured).
func (g *outGuard) addConfigured(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	if secrets := redact.URLSecretsIn(b); len(secrets) > 0 {
		g.add(redact.New(secrets))
	}
	return b
}

// clean is what every printed byte goes through: secrets redacted, then,
// for a terminal, control characters made visible.
func (g *outGuard) clean(s string, terminal bool) string {
	g.mu.Lock()
	reds := append([]redact.Redactor(nil), g.reds...)
	g.mu.Unlock()
	for _, r := range reds {
		s = r.String(s)
	}
	if terminal {
		s = terminalSafe(s)
	}
	return s
}

// guardedWriter writes through its guard, one write at a time.
type guardedWriter struct {
	g        *outGuard
	w        io.Writer
	terminal bool
	colour   bool // a terminal without NO_COLOR (colour.go)
	mu       sync.Mutex
}

func (w *guardedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.g.clean(string(p), w.terminal)
	if w.colour {
		s = paint(s)
	}
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// terminalSafe replaces the control characters of s a terminal would act
// on (escape sequences that clear the screen, set the title, move the
// cursor; carriage returns that overwrite a line; C1 controls) with a
// visible escape such as \x1b. Newlines and tabs stay; so do printable
// characters of any script. A byte that is not UTF-8 is shown escaped.
func terminalSafe(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
