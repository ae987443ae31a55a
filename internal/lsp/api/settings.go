package api

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/config"
)

// SettingsSchemaID is the $id of schema/settings.schema.json.
const SettingsSchemaID = "https://github.com/ioh-lsp/ioh-lsp/schema/settings.schema.json"

// SettingsSchema generates schema/settings.schema.json (JSON Schema draft
// 2020-12): the editor's `ioh` settings section (initializationOptions.ioh,
// workspace/configuration), which is one configuration layer as
// config.Settings declares it, with config.Choices as enums and
// config.Patterns, config.Defaults and config.Docs. Every key is
// optional and an unknown key is an error, as the server reads it.
func SettingsSchema() ([]byte, error) {
	top, err := settingsNode(reflect.TypeFor[config.Settings](), "")
	if err != nil {
		return nil, err
	}
	doc := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     SettingsSchemaID,
		"title":   "ioh-lsp editor settings",
		"description": "The `ioh` section of the editor settings (docs/lsp.md#settings): the keys of the user config (docs/policy.md#configuration), " +
			"generated from agent/config's declaration by `go run ./internal/schemagen`. Unknown keys are errors.",
	}
	for k, v := range top {
		doc[k] = v
	}
	return encodeSchema(doc)
}

// settingsNode is the schema of the value at path (dotted, no indices).
func settingsNode(t reflect.Type, path string) (map[string]any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var n map[string]any
	switch t.Kind() {
	case reflect.String:
		n = map[string]any{"type": "string"}
	case reflect.Bool:
		n = map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n = map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n = map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		n = map[string]any{"type": "number"}
	case reflect.Interface:
		// A byte size: a number of bytes or a string with a unit.
		n = map[string]any{"type": []any{"integer", "string"}}
	case reflect.Slice:
		items, err := settingsNode(t.Elem(), path)
		if err != nil {
			return nil, err
		}
		n = map[string]any{"type": "array", "items": items}
	case reflect.Map:
		n = map[string]any{"type": "object"}
	case reflect.Struct:
		props := map[string]any{}
		for i := range t.NumField() {
			f := t.Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			sub, err := settingsNode(f.Type, strings.TrimPrefix(path+"."+name, "."))
			if err != nil {
				return nil, err
			}
			props[name] = sub
		}
		n = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if req := requiredSettings[path]; len(req) > 0 {
			n["required"] = req
		}
	default:
		return nil, fmt.Errorf("settings %s: no JSON Schema for %s", path, t)
	}
	if c, ok := config.Choices()[path]; ok {
		enum := make([]any, len(c))
		for i, v := range c {
			enum[i] = v
		}
		n["enum"] = enum
	}
	if p, ok := config.Patterns()[path]; ok {
		n["pattern"] = p
	}
	if d, ok := config.Defaults()[path]; ok {
		n["default"] = d
	}
	if d, ok := config.Docs()[path]; ok {
		n["description"] = d
	}
	return n, nil
}

// requiredSettings are the fields an item must have: a policy rule is
// refused without its act, effect and pattern (policy.New).
var requiredSettings = map[string][]any{
	"policy.rules": {"act", "effect", "pattern"},
}

// yamlName is the key a struct field is read from: its yaml tag, else its
// json tag (the YAML decoder falls back to it); "" for a skipped field.
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	for _, key := range []string{"yaml", "json"} {
		if tag, ok := f.Tag.Lookup(key); ok {
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				return ""
			}
			if name != "" {
				return name
			}
		}
	}
	return strings.ToLower(f.Name)
}
