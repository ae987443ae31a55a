package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/suggest"
)

// unknownKey rewrites the decoder's "unknown field" error with the key
// meant, when one is near (`unknown field "modle"; did you mean
// "model"?`), else with the keys that may stand there. nil for any other
// error.
func unknownKey(f *ast.File, source string, err error) *Error {
	var ue *yaml.UnknownFieldError
	if !errors.As(err, &ue) || f == nil || ue.Token == nil || ue.Token.Position == nil {
		return nil
	}
	var path []string
	found := false
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			if path, found = keyAt(d.Body, ue.Token.Position, nil, 0); found {
				break
			}
		}
	}
	t, ok := typeAt(reflect.TypeOf(file{}), path)
	if !found || !ok || t.Kind() != reflect.Struct {
		return nil
	}
	keys := keysOf(t)
	name := strings.Trim(ue.Token.Value, `"'`)
	msg := fmt.Sprintf("unknown field %q", name)
	switch s := suggest.Nearest(name, keys); {
	case s != "":
		msg += fmt.Sprintf("; did you mean %q?", s)
	case len(path) == 0:
		msg += " (the keys are " + strings.Join(keys, ", ") + ")"
	default:
		msg += fmt.Sprintf(" (%s takes %s)", joinPath(path), strings.Join(keys, ", "))
	}
	return &Error{Source: source, Line: ue.Token.Position.Line, Col: ue.Token.Position.Column, Msg: msg}
}

// keyAt finds the mapping key whose token is at p and returns the path
// of the mapping that holds it.
func keyAt(n ast.Node, p *token.Position, path []string, depth int) ([]string, bool) {
	_, rp, ok := walkAt(n, path, depth, func(n ast.Node, _ []string) bool {
		mv, ok := n.(*ast.MappingValueNode)
		return ok && mv.Key != nil && tokenAt(mv.Key, p)
	})
	return rp, ok
}

// keysOf lists the keys a struct of the configuration takes, in order.
func keysOf(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" {
			tag, _, _ = strings.Cut(f.Tag.Get("json"), ",")
		}
		switch {
		case f.Anonymous && tag == "":
			keys = append(keys, keysOf(f.Type)...)
		case tag != "" && tag != "-":
			keys = append(keys, tag)
		case f.IsExported():
			keys = append(keys, strings.ToLower(f.Name))
		}
	}
	return keys
}
