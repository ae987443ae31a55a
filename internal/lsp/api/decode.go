package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ArgError is a bad command argument; the server answers it InvalidParams
// (-32602). Field is the JSON name of the field at fault ("" for the
// argument as a whole).
type ArgError struct {
	Command string
	Field   string
	Msg     string
}

func (e *ArgError) Error() string {
	switch {
	case e.Field != "" && e.Command != "":
		return fmt.Sprintf("%s: field %q: %s", e.Command, e.Field, e.Msg)
	case e.Command != "":
		return fmt.Sprintf("%s: %s", e.Command, e.Msg)
	case e.Field != "":
		return fmt.Sprintf("field %q: %s", e.Field, e.Msg)
	}
	return e.Msg
}

// checker is an argument with a rule across its fields (RunArgs).
type checker interface{ Check() error }

// Decode reads c's argument: raw is the command's one argument, nil (or
// JSON null) when none was sent. A required field missing, null or an
// empty string, a value of the wrong type, or an argument that is not an
// object is an *ArgError naming the command and the field.
func (c Spec[A, R]) Decode(raw json.RawMessage) (A, error) {
	var a A
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		if req := Required(reflect.TypeFor[A]()); len(req) > 0 {
			return a, &ArgError{Command: c.Name, Field: req[0], Msg: fmt.Sprintf("missing: the argument object with %s was not sent", strings.Join(quoted(req), ", "))}
		}
		return a, c.check(a)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return a, &ArgError{Command: c.Name, Msg: fmt.Sprintf("want one object argument, got %s", jsonKind(raw))}
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return a, &ArgError{Command: c.Name, Field: te.Field, Msg: fmt.Sprintf("want %s, got %s", kindOf(te.Type), te.Value)}
		}
		return a, &ArgError{Command: c.Name, Msg: err.Error()}
	}
	for _, name := range Required(reflect.TypeFor[A]()) {
		v, ok := fields[name]
		switch {
		case !ok:
			return a, &ArgError{Command: c.Name, Field: name, Msg: "missing"}
		case string(v) == "null" || string(v) == `""`:
			return a, &ArgError{Command: c.Name, Field: name, Msg: "must not be " + string(v)}
		}
	}
	return a, c.check(a)
}

func (c Spec[A, R]) check(a A) error {
	ch, ok := any(a).(checker)
	if !ok {
		return nil
	}
	err := ch.Check()
	var ae *ArgError
	if errors.As(err, &ae) {
		ae.Command = c.Name
	}
	return err
}

// Field is one JSON field of a struct type, embedded structs flattened.
type Field struct {
	Name      string
	Type      reflect.Type
	OmitEmpty bool
	Doc       string
	// Schema overrides the field's JSON type in the schema ("object").
	Schema string
}

// Fields lists the JSON fields of struct type t in declaration order.
func Fields(t reflect.Type) []Field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			out = append(out, Fields(sf.Type)...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, Field{
			Name: name, Type: sf.Type, OmitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
			Doc: sf.Tag.Get("doc"), Schema: sf.Tag.Get("schema"),
		})
	}
	return out
}

// Required lists the required fields of t: those without omitempty.
func Required(t reflect.Type) []string {
	var out []string
	for _, f := range Fields(t) {
		if !f.OmitEmpty {
			out = append(out, f.Name)
		}
	}
	return out
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// jsonKind names the JSON type of a value.
func jsonKind(raw json.RawMessage) string {
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == '"':
		return "a string"
	case raw[0] == '[':
		return "an array"
	case raw[0] == '{':
		return "an object"
	case raw[0] == 't' || raw[0] == 'f':
		return "a boolean"
	case raw[0] == 'n':
		return "null"
	}
	return "a number"
}

// kindOf names the JSON type a Go type decodes from.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
