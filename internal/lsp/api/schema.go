package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// CommandsSchemaID is the $id of schema/commands.schema.json.
const CommandsSchemaID = "https://github.com/ioh-lsp/ioh-lsp/schema/commands.schema.json"

// schemaExtra is an argument type with a rule across its fields, stated
// in JSON Schema keywords (RunArgs: exactly one of contract and inline).
type schemaExtra interface{ SchemaExtra() map[string]any }

// CommandsSchema generates schema/commands.schema.json (JSON Schema draft
// 2020-12) from All: $defs/<name>.args and $defs/<name>.result for every
// command, the types they share under their Go names, and at the top the
// params of workspace/executeCommand ({command, arguments}) that one of
// the commands accepts.
func CommandsSchema() ([]byte, error) {
	g := &schemaGen{defs: map[string]any{}}
	var branches, names []any
	for _, c := range All {
		args := g.object(c.Args, true)
		args["description"] = c.Doc
		if c.NoArgument {
			args["description"] = c.Doc + " Takes no argument (an empty object is accepted)."
		}
		g.defs[c.Name+".args"] = args
		res := g.schema(c.Result, false)
		res["description"] = "The result of " + c.Name + "."
		g.defs[c.Name+".result"] = res
		names = append(names, c.Name)

		arguments := map[string]any{"type": "array", "items": ref(c.Name + ".args")}
		branch := map[string]any{"properties": map[string]any{
			"command":   map[string]any{"const": c.Name},
			"arguments": arguments,
		}}
		if c.NeedsArgument() {
			arguments["minItems"] = 1
			branch["required"] = []any{"command", "arguments"}
		}
		branches = append(branches, branch)
	}
	doc := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     CommandsSchemaID,
		"title":   "ioh-lsp commands",
		"description": "The ioh.* commands of workspace/executeCommand (docs/lsp.md#commands), generated from lsp/api by `go run ./internal/schemagen`. " +
			"The whole document describes ExecuteCommandParams; $defs/<command>.args is a command's one argument and $defs/<command>.result what it returns. " +
			"A required string must not be empty. The server ignores fields it does not know; clients must not send them.",
		"type":     "object",
		"required": []any{"command"},
		"properties": map[string]any{
			"command":   map[string]any{"enum": names},
			"arguments": map[string]any{"type": "array"},
		},
		"oneOf": branches,
		"$defs": g.defs,
	}
	return encodeSchema(doc)
}

// encodeSchema is the checked-in form: two-space indent, sorted keys, a
// final newline.
func encodeSchema(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return buf.Bytes(), nil
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

// schemaGen turns Go types into schemas; named structs other than a
// command's own argument go to $defs under their Go name.
type schemaGen struct {
	defs map[string]any
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// schema is t's schema; args says t is (part of) a command's argument,
// where a required string must not be empty.
func (g *schemaGen) schema(t reflect.Type, args bool) map[string]any {
	if t == rawMessage {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.schema(t.Elem(), args)
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem(), args)}
	case reflect.Map:
		// The interpreter knows additionalProperties only as a boolean:
		// the values' type is stated in words.
		return map[string]any{"type": "object", "description": "values: " + typeWord(t.Elem())}
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			return g.object(t, args)
		}
		if args {
			name += "Arg"
		}
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = nil // a recursive type refers to itself
			g.defs[name] = g.object(t, args)
		}
		return ref(name)
	}
	panic(fmt.Sprintf("api: no JSON Schema for %s", t))
}

// object is the closed object schema of struct type t.
func (g *schemaGen) object(t reflect.Type, args bool) map[string]any {
	props := map[string]any{}
	var required []any
	for _, f := range Fields(t) {
		var s map[string]any
		switch {
		case f.Schema != "":
			s = map[string]any{"type": f.Schema}
		case f.Type.Kind() == reflect.Pointer && !f.OmitEmpty && !args:
			// Always sent, null when unknown.
			s = g.schema(f.Type.Elem(), args)
			if tp, ok := s["type"].(string); ok {
				s["type"] = []any{tp, "null"}
			}
		default:
			s = g.schema(f.Type, args)
		}
		if f.Doc != "" {
			if _, isRef := s["$ref"]; !isRef {
				s["description"] = f.Doc
			} else {
				s = map[string]any{"$ref": s["$ref"], "description": f.Doc}
			}
		}
		if !f.OmitEmpty {
			required = append(required, f.Name)
			if args && f.Type.Kind() == reflect.String {
				s["minLength"] = 1
			}
		}
		props[f.Name] = s
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	if x, ok := reflect.New(t).Elem().Interface().(schemaExtra); ok {
		for k, v := range x.SchemaExtra() {
			out[k] = v
		}
	}
	return out
}

func typeWord(t reflect.Type) string {
	s := fmt.Sprint(t)
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return s
}
