package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// typeError rewrites a decoding error about a value of the wrong type
// ("cannot unmarshal string into Go struct field file.Budget of type
// int", "string was used where sequence is expected") as the field's path
// and what it wants, in words: "budget.steps: want a whole number, got
// "ten"". It returns nil for any other error (syntax, unknown or
// duplicate keys), which positioned reports as the parser words it.
func typeError(f *ast.File, source string, err error) *Error {
	var (
		te *yaml.TypeError
		ue *yaml.UnexpectedNodeTypeError
		oe *yaml.OverflowError
	)
	var tok *token.Token
	switch {
	case errors.As(err, &te):
		tok = te.Token
	case errors.As(err, &ue):
		tok = ue.Token
	case errors.As(err, &oe):
		tok = oe.Token
	default:
		return nil
	}
	if f == nil || tok == nil || tok.Position == nil {
		return nil
	}
	var found ast.Node
	var path []string
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			if n, p, ok := nodeAt(d.Body, tok.Position, nil, 0); ok {
				found, path = n, p
				break
			}
		}
	}
	if found == nil || len(path) == 0 {
		return nil
	}
	want := wantOf(reflect.TypeOf(file{}), path)
	if want == "" {
		return nil
	}
	msg := fmt.Sprintf("%s: want %s, got %s", joinPath(path), want, gotOf(found))
	if oe != nil {
		msg = fmt.Sprintf("%s: %s does not fit (want %s)", joinPath(path), oe.SrcNum, want)
	}
	return &Error{Source: source, Line: tok.Position.Line, Col: tok.Position.Column, Msg: msg}
}

// nodeAt finds the value node whose token is at p and the path of keys
// and indices ("[0]") leading to it.
func nodeAt(n ast.Node, p *token.Position, path []string, depth int) (ast.Node, []string, bool) {
	return walkAt(n, path, depth, func(n ast.Node, path []string) bool {
		return len(path) > 0 && tokenAt(n, p)
	})
}

// walkAt walks n depth first, each node with the path of keys and
// indices ("[0]") that leads to it, and returns the first node at accepts
// and its path.
func walkAt(n ast.Node, path []string, depth int, at func(ast.Node, []string) bool) (ast.Node, []string, bool) {
	if n == nil || depth > 64 {
		return nil, nil, false
	}
	if at(n, path) {
		return n, path, true
	}
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, v := range n.Values {
			if r, rp, ok := walkAt(v, path, depth+1, at); ok {
				return r, rp, true
			}
		}
	case *ast.MappingValueNode:
		key := ""
		if n.Key != nil {
			key = strings.Trim(n.Key.String(), `"'`)
		}
		return walkAt(n.Value, append(append([]string(nil), path...), key), depth+1, at)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			if r, rp, ok := walkAt(v, append(append([]string(nil), path...), "["+strconv.Itoa(i)+"]"), depth+1, at); ok {
				return r, rp, true
			}
		}
	case *ast.TagNode:
		return walkAt(n.Value, path, depth+1, at)
	case *ast.AnchorNode:
		return walkAt(n.Value, path, depth+1, at)
	}
	return nil, nil, false
}

// tokenAt reports whether n's token starts at p.
func tokenAt(n ast.Node, p *token.Position) bool {
	t := n.GetToken()
	return t != nil && t.Position != nil && t.Position.Line == p.Line && t.Position.Column == p.Column
}

func joinPath(path []string) string {
	var b strings.Builder
	for _, s := range path {
		if !strings.HasPrefix(s, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// typeAt is the type the configuration holds at path (pointers taken
// off); false when path leads nowhere in it.
func typeAt(t reflect.Type, path []string) (reflect.Type, bool) {
	for _, seg := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, seg)
			if !ok {
				return nil, false
			}
			t = f.Type
		case reflect.Slice, reflect.Array:
			if !strings.HasPrefix(seg, "[") {
				return nil, false
			}
			t = t.Elem()
		case reflect.Map:
			t = t.Elem()
		default:
			return nil, false
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, true
}

// wantOf names, in words, the type the configuration expects at path.
func wantOf(t reflect.Type, path []string) string {
	t, ok := typeAt(t, path)
	if !ok {
		return ""
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	}
	return ""
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" {
			tag, _, _ = strings.Cut(f.Tag.Get("json"), ",")
		}
		if tag == name || (tag == "" && !f.Anonymous && strings.EqualFold(f.Name, name)) {
			return f, true
		}
		if f.Anonymous && tag == "" {
			if g, ok := fieldByTag(f.Type, name); ok {
				return g, true
			}
		}
	}
	return reflect.StructField{}, false
}

// gotOf names what was written: a scalar's text (quoted, shortened) or
// the kind of collection.
func gotOf(n ast.Node) string {
	switch n := n.(type) {
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.NullNode:
		return "nothing"
	case *ast.TagNode:
		return gotOf(n.Value)
	case *ast.AnchorNode:
		return gotOf(n.Value)
	}
	s := n.GetToken().Value
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// fractions finds a number with a fractional part written where the
// configuration wants a whole number (budget.steps: 1.5), which decoding
// would silently truncate.
func fractions(f *ast.File, source string) *Error {
	var bad *Error
	var walk func(n ast.Node, path []string, depth int)
	walk = func(n ast.Node, path []string, depth int) {
		if n == nil || bad != nil || depth > 64 {
			return
		}
		switch n := n.(type) {
		case *ast.FloatNode:
			if n.Value != float64(int64(n.Value)) && wantOf(reflect.TypeOf(file{}), path) == "a whole number" {
				bad = &Error{Source: source, Msg: fmt.Sprintf("%s: want a whole number, got %s", joinPath(path), gotOf(n))}
				if t := n.GetToken(); t != nil && t.Position != nil {
					bad.Line, bad.Col = t.Position.Line, t.Position.Column
				}
			}
		case *ast.MappingNode:
			for _, v := range n.Values {
				walk(v, path, depth+1)
			}
		case *ast.MappingValueNode:
			key := ""
			if n.Key != nil {
				key = strings.Trim(n.Key.String(), `"'`)
			}
			walk(n.Value, append(append([]string(nil), path...), key), depth+1)
		case *ast.SequenceNode:
			for i, v := range n.Values {
				walk(v, append(append([]string(nil), path...), "["+strconv.Itoa(i)+"]"), depth+1)
			}
		case *ast.TagNode:
			walk(n.Value, path, depth+1)
		case *ast.AnchorNode:
			walk(n.Value, path, depth+1)
		}
	}
	for _, d := range f.Docs {
		if d != nil {
			walk(d.Body, nil, 0)
		}
	}
	return bad
}
