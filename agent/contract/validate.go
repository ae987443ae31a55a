package contract

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/ioh-lsp/ioh-lsp/schema"
)

var (
	schemaOnce sync.Once
	taskSchema *jsonschema.Schema
	schemaErr  error
)

// compiled returns the embedded task schema, compiled once.
func compiled() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.TaskJSON))
		if err != nil {
			schemaErr = fmt.Errorf("decode embedded task schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(schema.TaskID, doc); err != nil {
			schemaErr = fmt.Errorf("add embedded task schema: %w", err)
			return
		}
		taskSchema, schemaErr = c.Compile(schema.TaskID)
		if schemaErr != nil {
			schemaErr = fmt.Errorf("compile embedded task schema: %w", schemaErr)
		}
	})
	return taskSchema, schemaErr
}

// validate checks the tree against the schema and returns the first
// problem in document order, or nil.
func validate(t *tree) (*Error, error) {
	sch, err := compiled()
	if err != nil {
		return nil, err
	}
	verr := sch.Validate(t.value)
	if verr == nil {
		return nil, nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return nil, fmt.Errorf("validate contract: %w", verr)
	}
	var errs []*Error
	for _, leaf := range leaves(ve) {
		errs = append(errs, describe(t, leaf)...)
	}
	if len(errs) == 0 {
		p := t.values[""]
		return &Error{Line: p.line, Col: p.col, Msg: "invalid contract"}, nil
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

func ptrOf(loc []string) string {
	var sb strings.Builder
	for _, tok := range loc {
		sb.WriteString(pointer("", tok))
	}
	return sb.String()
}

// leaves flattens the error tree. For oneOf/anyOf (verify as a list or an
// object) it keeps only the branches that match the value's shape, so a
// bad check inside verify is reported as that, not as "want array".
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
		var kept []*jsonschema.ValidationError
		var wants []string
		got := ""
		for _, branch := range e.Causes {
			bl := leaves(branch)
			if len(bl) == 1 && slices.Equal(bl[0].InstanceLocation, e.InstanceLocation) {
				if ty, ok := bl[0].ErrorKind.(*kind.Type); ok {
					wants = append(wants, ty.Want...)
					got = ty.Got
					continue
				}
			}
			kept = append(kept, bl...)
		}
		if len(kept) == 0 && len(wants) > 0 {
			return []*jsonschema.ValidationError{{
				InstanceLocation: e.InstanceLocation,
				ErrorKind:        &kind.Type{Got: got, Want: wants},
			}}
		}
		return kept
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

var printer = message.NewPrinter(language.English)

// describe turns one schema failure into contract errors with positions
// and messages a person can act on.
func describe(t *tree, e *jsonschema.ValidationError) []*Error {
	ptr := ptrOf(e.InstanceLocation)
	at := func(p pos, field, msg string) *Error {
		return &Error{Line: p.line, Col: p.col, Field: field, Msg: msg}
	}
	here := t.values[ptr]
	field := fieldOf(ptr)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []*Error
		for _, m := range k.Missing {
			out = append(out, at(here, fieldOf(pointer(ptr, m)), "required field missing"))
		}
		return out
	case *kind.AdditionalProperties:
		var out []*Error
		for _, p := range k.Properties {
			kp := pointer(ptr, p)
			out = append(out, at(t.keys[kp], fieldOf(kp), "unknown field"))
		}
		return out
	case *kind.Type:
		return []*Error{at(here, field, fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got))}
	case *kind.Enum:
		var want []string
		for _, w := range k.Want {
			want = append(want, fmt.Sprint(w))
		}
		return []*Error{at(here, field, fmt.Sprintf("%s is not one of %s", display(k.Got), strings.Join(want, ", ")))}
	case *kind.Const:
		if ptr == "/version" {
			return []*Error{at(here, field, fmt.Sprintf("unsupported version %s (want 1)", display(k.Got)))}
		}
		return []*Error{at(here, field, fmt.Sprintf("must be %s", display(k.Want)))}
	case *kind.Pattern:
		switch {
		case strings.Contains(e.SchemaURL, "/$defs/duration"):
			return []*Error{at(here, field, fmt.Sprintf("invalid duration %q (want a Go duration such as 30s, 5m or 1h30m)", k.Got))}
		case strings.Contains(e.SchemaURL, "/$defs/api_key_env"):
			return []*Error{at(here, field, fmt.Sprintf("%q must name a variable ending in _API_KEY or _TOKEN", k.Got))}
		}
	case *kind.MinLength, *kind.MinItems:
		return []*Error{at(here, field, "must not be empty")}
	case *kind.Minimum:
		return []*Error{at(here, field, fmt.Sprintf("must be at least %s", k.Want.RatString()))}
	case *kind.Maximum:
		return []*Error{at(here, field, fmt.Sprintf("must be at most %s", k.Want.RatString()))}
	}
	return []*Error{at(here, field, e.ErrorKind.LocalizedString(printer))}
}

func display(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}
