package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// GrepParams are grep's arguments.
type GrepParams struct {
	Pattern string `json:"pattern"`
	Glob    string `json:"glob,omitempty"`
	Literal bool   `json:"literal,omitempty"`
	Max     int    `json:"max,omitempty"`
	Files   bool   `json:"files,omitempty"`
}

const grepDesc = "Search workspace files (gitignore-aware, pending edits included) for a regular expression (or literal); prints path:line:text, long lines cut around the match. At max matches (default 200) it says how many there were: narrow with glob or the pattern, or set files for per-file match counts. Files you may not read without approval (.env, keys) are never searched and do not count against max; find names them, and read_file one to be asked."

const grepSchema = `{"type":"object","properties":{"pattern":{"type":"string"},"glob":{"type":"string","description":"only files matching this ** glob"},"literal":{"type":"boolean"},"max":{"type":"integer","minimum":1,"description":"stop after this many matches (default 200)"},"files":{"type":"boolean","description":"list files with match counts instead of lines"}},"required":["pattern"],"additionalProperties":false}`

// Caps of grep's answer: the bytes of one shown line (cut around its
// match), the files a files:true answer lists, and how far past the
// shown matches the search counts (countFactor × max; files: filesCount).
const (
	grepLine    = 300
	grepFiles   = 100
	countFactor = 10
	filesCount  = 20000
)

type grep struct {
	cs    *workspace.ChangeSet
	reads ReadCheck
}

// NewGrep returns grep over cs; every file it returns lines of is judged
// by reads (nil: the built-in layer).
func NewGrep(cs *workspace.ChangeSet, reads ReadCheck) Tool { return grep{cs, reads} }

func (grep) Spec() model.ToolSpec { return spec("grep", grepDesc, grepSchema) }
func (grep) ReadOnly() bool       { return true }

// Acts: a read of the workspace; each file found is judged again when
// the results are filtered (readFilter).
func (t grep) Acts(args json.RawMessage) ([]Act, error) {
	var p GrepParams
	if err := decode(args, &p); err != nil {
		return nil, err
	}
	a, err := PathAct(t.cs, policy.ActRead, ".")
	if err != nil {
		return nil, err
	}
	return []Act{a}, nil
}

func (t grep) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var p GrepParams
	if err := decode(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Pattern == "" {
		return Errorf("bad arguments: pattern is required"), nil
	}
	f := newReadFilter(t.cs, t.reads)
	show := p.Max
	if show <= 0 {
		show = 200
	}
	o := workspace.GrepOptions{Pattern: p.Pattern, Literal: p.Literal, Max: show * countFactor, Skip: f.skip}
	if p.Files {
		o.Max = filesCount
	}
	if p.Glob != "" {
		o.Globs = []string{p.Glob}
	}
	ms, total, err := t.cs.GrepCount(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Errorf("%v", err), nil // the workspace names the pattern
	}
	// The answer says nothing of withheld files (no note, unlike find's):
	// which of them match is exactly what must not be told.
	if len(ms) == 0 {
		if p.Glob != "" {
			return Result{Content: fmt.Sprintf("(no matches in files matching %s)", p.Glob)}, nil
		}
		return Result{Content: "(no matches)"}, nil
	}
	if p.Files {
		return Result{Content: fileCounts(ms, total > len(ms))}, nil
	}
	if len(ms) > show {
		ms = ms[:show]
	}
	re := matchFinder(p)
	var b strings.Builder
	for _, m := range ms {
		text := m.Text
		if len(text) > grepLine {
			lo, hi := 0, 0
			if loc := re.FindStringIndex(text); loc != nil {
				lo, hi = loc[0], loc[1]
			}
			text = cutAround(text, lo, hi, grepLine)
		}
		fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, text)
	}
	if total > len(ms) {
		atLeast := ""
		if total >= o.Max {
			atLeast = "≥ " // the count stopped too
		}
		fmt.Fprintf(&b, "[showing %d of %s%s matches; narrow with glob or a more specific pattern, or set files for match counts per file]\n", len(ms), atLeast, thousands(total))
	}
	return Result{Content: clip(b.String())}, nil
}

// matchFinder finds a match inside one line, to centre a cut line on it
// (the workspace already checked the pattern compiles).
func matchFinder(p GrepParams) *regexp.Regexp {
	pat := p.Pattern
	if p.Literal {
		pat = regexp.QuoteMeta(pat)
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return regexp.MustCompile("^")
	}
	return re
}

// fileCounts is one line per matching file with its match count, most
// matches first, at most grepFiles files; more: the count stopped early.
func fileCounts(ms []workspace.Match, more bool) string {
	counts := map[string]int{}
	var order []string
	for _, m := range ms {
		if counts[m.Path] == 0 {
			order = append(order, m.Path)
		}
		counts[m.Path]++
	}
	sort.SliceStable(order, func(i, j int) bool { return counts[order[i]] > counts[order[j]] })
	var b strings.Builder
	for _, p := range order[:min(len(order), grepFiles)] {
		fmt.Fprintf(&b, "%s: %d\n", p, counts[p])
	}
	atLeast := ""
	if more {
		atLeast = "≥ "
	}
	fmt.Fprintf(&b, "[%s%s matches in %s files", atLeast, thousands(len(ms)), thousands(len(order)))
	if len(order) > grepFiles {
		fmt.Fprintf(&b, "; showing the %d with the most; narrow with glob", grepFiles)
	}
	b.WriteString("]\n")
	return b.String()
}
