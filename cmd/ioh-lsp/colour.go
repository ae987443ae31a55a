package main

import (
	"regexp"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/approve"
)

// Colour, kept minimal: on stderr, when it is a terminal and NO_COLOR is
// unset or empty (https://no-color.org), a run's outcome word in its
// summary line ("r-…: verified after …") and the word "warning:" are
// coloured. Never on a pipe or a file, never on stdout (which may carry
// JSON or a patch).

// wantColour reports whether w (the process's stderr) gets colour.
func wantColour(w any, getenv func(string) string) bool {
	return getenv("NO_COLOR") == "" && approve.IsTerminal(w)
}

// colourPatterns match what is coloured, built on first use.
var colourPatterns = sync.OnceValue(func() [2]*regexp.Regexp {
	return [2]*regexp.Regexp{
		regexp.MustCompile(`(?m)^(r-[0-9a-f]+: )([a-z_]+)( after )`),
		regexp.MustCompile(`(?m)^(ioh-lsp: |  )(warning:)`),
	}
})

// outcomeColour is an outcome's SGR colour: green when it went well,
// yellow when it waits or stopped short, red when it failed.
func outcomeColour(outcome string) string {
	switch outcome {
	case "verified", "applied", "unverified":
		return "32"
	case "awaiting_approval", "budget_exceeded", "interrupted", "cancelled", "running":
		return "33"
	}
	return "31"
}

// paint colours the outcome word and warnings of s (already made
// terminal-safe, so every escape in the result is ours).
func paint(s string) string {
	p := colourPatterns()
	s = p[0].ReplaceAllStringFunc(s, func(m string) string {
		g := p[0].FindStringSubmatch(m)
		return g[1] + "\x1b[" + outcomeColour(g[2]) + "m" + g[2] + "\x1b[0m" + g[3]
	})
	return p[1].ReplaceAllString(s, "${1}\x1b[33m${2}\x1b[0m")
}
