package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"path"
	"strings"
)

// After a write, the written file is parsed where a parser is at hand
// without a new dependency: Go (go/parser) and JSON (encoding/json). The
// result reports the syntax errors the write introduced (those the file
// did not have before), with line numbers; it never blocks the write, as
// an edit in several steps may pass through a broken state.

// maxSyntaxErrors caps the errors one report lists.
const maxSyntaxErrors = 10

// syntaxErrors returns a file's syntax errors ("line:col: message") and
// the checker's name; nil and "" for a language without one.
func syntaxErrors(name string, src []byte) ([]string, string) {
	switch strings.ToLower(path.Ext(name)) {
	case ".go":
		_, err := parser.ParseFile(token.NewFileSet(), name, src, parser.AllErrors|parser.SkipObjectResolution)
		var list scanner.ErrorList
		if errors.As(err, &list) {
			out := make([]string, 0, len(list))
			for _, e := range list {
				out = append(out, fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Column, e.Msg))
			}
			return out, "go/parser"
		}
		return nil, "go/parser"
	case ".json":
		var v any
		err := json.Unmarshal(src, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + strings.Count(string(src[:min(int(se.Offset), len(src))]), "\n")
			return []string{fmt.Sprintf("%d: %s", line, se.Error())}, "encoding/json"
		}
		if err != nil && len(strings.TrimSpace(string(src))) == 0 {
			return []string{"1: empty JSON document"}, "encoding/json"
		}
		return nil, "encoding/json"
	}
	return nil, ""
}

// syntaxReport says which syntax errors after has that before (nil: the
// file is new or its earlier content is not compared) lacks. Errors are
// compared by message, as line numbers move with the edit.
func syntaxReport(name string, before, after []byte) string {
	errs, checker := syntaxErrors(name, after)
	if len(errs) == 0 {
		return ""
	}
	old := map[string]int{}
	if before != nil {
		prev, _ := syntaxErrors(name, before)
		for _, e := range prev {
			old[message(e)]++
		}
	}
	var fresh []string
	for _, e := range errs {
		if old[message(e)] > 0 {
			old[message(e)]--
			continue
		}
		fresh = append(fresh, e)
	}
	if len(fresh) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nsyntax (%s): this write leaves %d new error(s) in %s; the change is kept, fix it with another edit:", checker, len(fresh), name)
	for _, e := range fresh[:min(len(fresh), maxSyntaxErrors)] {
		fmt.Fprintf(&b, "\n  %s:%s", name, e)
	}
	if len(fresh) > maxSyntaxErrors {
		fmt.Fprintf(&b, "\n  … and %d more", len(fresh)-maxSyntaxErrors)
	}
	return b.String()
}

// message is an error without its position.
func message(e string) string {
	for range 2 {
		if i := strings.Index(e, ": "); i >= 0 && strings.Trim(e[:i], "0123456789:") == "" {
			e = e[i+2:]
		}
	}
	return e
}
