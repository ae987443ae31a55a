package contract

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/suggest"
	"github.com/ioh-lsp/ioh-lsp/schema"
)

// compiled returns the embedded task schema, compiled once at first use.
var compiled = sync.OnceValues(func() (*schemaNode, error) {
	n, err := compileSchema(schema.TaskJSON)
	if err != nil {
		return nil, fmt.Errorf("compile embedded task schema: %w", err)
	}
	return n, nil
})

// validate checks the tree against the schema and returns the first
// problem in document order, or nil.
func validate(t *tree) (*Error, error) {
	sch, err := compiled()
	if err != nil {
		return nil, err
	}
	vs, err := check(sch, t.value, "", 0)
	if err != nil {
		return nil, fmt.Errorf("validate contract: %w", err)
	}
	if len(vs) == 0 {
		return nil, nil
	}
	var errs []*Error
	for _, v := range vs {
		errs = append(errs, describe(t, v)...)
	}
	// The first in document order is the one a reader fixes first.
	slices.SortStableFunc(errs, func(a, b *Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
	return errs[0], nil
}

// describe turns one schema failure into contract errors with positions
// and messages a person can act on.
func describe(t *tree, v violation) []*Error {
	at := func(p pos, field, msg string) *Error {
		return &Error{Line: p.line, Col: p.col, Field: field, Msg: msg}
	}
	here := t.values[v.ptr]
	field := fieldOf(v.ptr)
	switch v.kind {
	case vRequired:
		var out []*Error
		for _, m := range v.names {
			out = append(out, at(here, fieldOf(pointer(v.ptr, m)), "required field missing"))
		}
		return out
	case vAdditional:
		var out []*Error
		for _, p := range v.names {
			kp := pointer(v.ptr, p)
			msg := "unknown field"
			if s := suggest.Nearest(p, v.known); s != "" {
				msg += fmt.Sprintf("; did you mean %s?", s)
			}
			out = append(out, at(t.keys[kp], fieldOf(kp), msg))
		}
		return out
	case vType:
		return []*Error{at(here, field, fmt.Sprintf("expected %s, got %s", strings.Join(v.want, " or "), v.got))}
	case vEnum:
		var want []string
		for _, w := range v.allowed {
			want = append(want, fmt.Sprint(w))
		}
		return []*Error{at(here, field, fmt.Sprintf("%s is not one of %s", display(v.value), strings.Join(want, ", ")))}
	case vConst:
		if v.ptr == "/version" {
			return []*Error{at(here, field, fmt.Sprintf("unsupported version %s (want 1)", display(v.value)))}
		}
		return []*Error{at(here, field, fmt.Sprintf("must be %s", display(v.allowed[0])))}
	case vPattern:
		switch {
		case strings.Contains(v.schemaLoc, "/$defs/duration"):
			return []*Error{at(here, field, fmt.Sprintf("invalid duration %q (want a Go duration such as 30s, 5m or 1h30m)", v.value))}
		case strings.Contains(v.schemaLoc, "/$defs/api_key_env"):
			return []*Error{at(here, field, fmt.Sprintf("%q must name a variable ending in _API_KEY or _TOKEN", v.value))}
		}
		return []*Error{at(here, field, fmt.Sprintf("%q does not match the pattern at %s", v.value, v.schemaLoc))}
	case vMinLength, vMinItems:
		return []*Error{at(here, field, "must not be empty")}
	case vMinimum:
		return []*Error{at(here, field, fmt.Sprintf("must be at least %s", v.limit.RatString()))}
	case vMaximum:
		return []*Error{at(here, field, fmt.Sprintf("must be at most %s", v.limit.RatString()))}
	}
	return []*Error{at(here, field, "matches more than one of the allowed shapes")}
}

func display(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}
