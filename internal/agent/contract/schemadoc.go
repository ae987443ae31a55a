package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Schema is a JSON Schema document compiled by the interpreter the
// contract parser uses (schemacheck.go): the same subset, the same
// refusal of a keyword it does not know. The other schemas ioh-lsp ships
// (schema/commands.schema.json, schema/settings.schema.json) are checked
// with it, so they cannot drift into keywords only a full validator knows.
type Schema struct {
	root *schemaNode
	defs map[string]json.RawMessage
	doc  map[string]json.RawMessage
}

// CompileSchema compiles a schema document.
func CompileSchema(doc []byte) (*Schema, error) {
	root, err := compileSchema(doc)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	var defs map[string]json.RawMessage
	if raw, ok := top["$defs"]; ok {
		if err := json.Unmarshal(raw, &defs); err != nil {
			return nil, fmt.Errorf("decode schema $defs: %w", err)
		}
	}
	return &Schema{root: root, defs: defs, doc: top}, nil
}

// Def compiles the document's entry $defs/name as a schema of its own (its
// $refs still resolve against the document's $defs).
func (s *Schema) Def(name string) (*Schema, error) {
	if _, ok := s.defs[name]; !ok {
		return nil, fmt.Errorf("schema has no $defs entry %q", name)
	}
	ref, err := json.Marshal("#/$defs/" + name)
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(map[string]json.RawMessage{"$defs": s.doc["$defs"], "$ref": ref})
	if err != nil {
		return nil, err
	}
	return CompileSchema(doc)
}

// Validate checks a JSON value against the schema; the error lists each
// failure with the JSON pointer of the value at fault.
func (s *Schema) Validate(instance []byte) error {
	dec := json.NewDecoder(bytes.NewReader(instance))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("decode value: %w", err)
	}
	if dec.More() {
		return errors.New("decode value: more than one JSON value")
	}
	vs, err := check(s.root, v, "", 0)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		return nil
	}
	msgs := make([]string, len(vs))
	for i, x := range vs {
		msgs[i] = x.String()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// String describes one failure: where, and what the schema wanted.
func (v violation) String() string {
	at := v.ptr
	if at == "" {
		at = "/"
	}
	var what string
	switch v.kind {
	case vType:
		what = fmt.Sprintf("want %s, got %s", strings.Join(v.want, " or "), v.got)
	case vConst, vEnum:
		what = fmt.Sprintf("%s is not one of %v", display(v.value), v.allowed)
	case vRequired:
		what = fmt.Sprintf("missing %s", strings.Join(v.names, ", "))
	case vAdditional:
		what = fmt.Sprintf("unknown %s", strings.Join(v.names, ", "))
	case vMinLength:
		what = "too short"
	case vMinItems:
		what = "too few items"
	case vPattern:
		what = fmt.Sprintf("%s does not match the pattern", display(v.value))
	case vMinimum:
		what = fmt.Sprintf("below the minimum %s", v.limit.RatString())
	case vMaximum:
		what = fmt.Sprintf("above the maximum %s", v.limit.RatString())
	case vOneOfSeveral:
		what = "matches more than one of oneOf"
	default:
		what = "invalid"
	}
	return fmt.Sprintf("%s: %s (schema %s)", at, what, v.schemaLoc)
}
