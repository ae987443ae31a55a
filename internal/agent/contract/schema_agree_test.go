package contract

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goccy/go-yaml/parser"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/ioh-lsp/ioh-lsp/schema"
)

// The binary validates contracts with the small interpreter of
// schemacheck.go; these tests hold it to a full draft 2020-12
// implementation (a test-only dependency) on the shipped schema.

var libSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.TaskJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schema.TaskID, doc); err != nil {
		return nil, err
	}
	return c.Compile(schema.TaskID)
})

// TestSchemaIsValidDraft2020 proves schema/task.schema.json compiles (and
// passes the metaschema) as draft 2020-12, the dialect editors' YAML
// language servers read, and that it uses only keywords the interpreter
// supports.
func TestSchemaIsValidDraft2020(t *testing.T) {
	if _, err := libSchema(); err != nil {
		t.Fatalf("library rejects schema/task.schema.json: %v", err)
	}
	if _, err := compileSchema(schema.TaskJSON); err != nil {
		t.Fatalf("interpreter rejects schema/task.schema.json: %v", err)
	}
}

func TestCompileSchemaRefusesUnsupported(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"unknown keyword", `{"type": "object", "anyOf": [{}]}`, `schema #: unsupported keyword "anyOf"`},
		{"nested unknown keyword", `{"properties": {"a": {"type": "string", "format": "email"}}}`, `schema #/properties/a: unsupported keyword "format"`},
		{"schema additionalProperties", `{"additionalProperties": {"type": "string"}}`, `schema #/additionalProperties: only a boolean is supported`},
		{"remote ref", `{"$ref": "other.json"}`, `schema #/$ref: only "#/$defs/<name>" is supported, got other.json`},
		{"missing def", `{"$ref": "#/$defs/nope"}`, `schema #: $ref "#/$defs/nope" does not name an entry of $defs`},
		{"nested defs", `{"properties": {"a": {"$defs": {}}}}`, `schema #/properties/a: $defs is supported only at the top level`},
		{"boolean schema", `{"items": true}`, `schema #/items: want an object schema, got boolean (boolean schemas are not supported)`},
		{"bad type", `{"type": "int"}`, `schema #/type: unknown type "int"`},
		{"bad minLength", `{"minLength": -1}`, `schema #/minLength: want a non-negative integer`},
		{"bad pattern", `{"pattern": "("}`, "schema #/pattern: error parsing regexp: missing closing ): `(`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compileSchema([]byte(tt.src))
			if err == nil {
				t.Fatal("compileSchema succeeded")
			}
			if diff := cmp.Diff(err.Error(), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestSchemaRefCycleIsAnError(t *testing.T) {
	n, err := compileSchema([]byte(`{"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := check(n, "x", "", 0); err == nil || !strings.Contains(err.Error(), "$ref cycle") {
		t.Errorf("check = %v, want a $ref cycle error", err)
	}
}

// treeOf builds the document tree the way Parse does, or nil when the
// source fails before validation (syntax, several documents, hostile).
func treeOf(data []byte) *tree {
	if len(data) > MaxSize {
		return nil
	}
	f, err := parser.ParseBytes(bytes.TrimPrefix(data, []byte("\ufeff")), 0)
	if err != nil {
		return nil
	}
	var body []*tree
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			tr, berr := build(d.Body)
			if berr != nil {
				return nil
			}
			body = append(body, tr)
		}
	}
	if len(body) != 1 {
		return nil
	}
	return body[0]
}

// libFailures flattens the library's error tree the way the validator
// this interpreter replaced did (keeping, for oneOf, the branches whose
// shape matches) into "pointer kind detail" lines.
func libFailures(e *jsonschema.ValidationError) []string {
	if len(e.Causes) == 0 {
		return []string{libLine(e)}
	}
	if _, ok := e.ErrorKind.(*kind.OneOf); ok {
		var kept []string
		var wants []string
		got := ""
		for _, branch := range e.Causes {
			bl := libFailures(branch)
			loc := ptrOfTokens(e.InstanceLocation)
			if len(bl) == 1 && strings.HasPrefix(bl[0], loc+" type ") {
				ty := lastCause(branch).ErrorKind.(*kind.Type)
				wants = append(wants, ty.Want...)
				got = ty.Got
				continue
			}
			kept = append(kept, bl...)
		}
		if len(kept) == 0 {
			return []string{fmt.Sprintf("%s type %v %s", ptrOfTokens(e.InstanceLocation), wants, got)}
		}
		return kept
	}
	var out []string
	for _, c := range e.Causes {
		out = append(out, libFailures(c)...)
	}
	return out
}

func lastCause(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

func ptrOfTokens(loc []string) string {
	var sb strings.Builder
	for _, tok := range loc {
		sb.WriteString(pointer("", tok))
	}
	return sb.String()
}

func libLine(e *jsonschema.ValidationError) string {
	ptr := ptrOfTokens(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("%s type %v %s", ptr, k.Want, k.Got)
	case *kind.Required:
		return fmt.Sprintf("%s required %v", ptr, k.Missing)
	case *kind.AdditionalProperties:
		return fmt.Sprintf("%s additional %v", ptr, slices.Sorted(slices.Values(k.Properties)))
	case *kind.Const:
		return ptr + " const"
	case *kind.Enum:
		return ptr + " enum"
	case *kind.Pattern:
		return ptr + " pattern"
	case *kind.MinLength:
		return ptr + " minLength"
	case *kind.MinItems:
		return ptr + " minItems"
	case *kind.Minimum:
		return fmt.Sprintf("%s minimum %s", ptr, k.Want.RatString())
	case *kind.Maximum:
		return fmt.Sprintf("%s maximum %s", ptr, k.Want.RatString())
	}
	return fmt.Sprintf("%s %T", ptr, e.ErrorKind)
}

func ourLine(v violation) string {
	switch v.kind {
	case vType:
		return fmt.Sprintf("%s type %v %s", v.ptr, v.want, v.got)
	case vRequired:
		return fmt.Sprintf("%s required %v", v.ptr, v.names)
	case vAdditional:
		return fmt.Sprintf("%s additional %v", v.ptr, v.names)
	case vConst:
		return v.ptr + " const"
	case vEnum:
		return v.ptr + " enum"
	case vPattern:
		return v.ptr + " pattern"
	case vMinLength:
		return v.ptr + " minLength"
	case vMinItems:
		return v.ptr + " minItems"
	case vMinimum:
		return fmt.Sprintf("%s minimum %s", v.ptr, v.limit.RatString())
	case vMaximum:
		return fmt.Sprintf("%s maximum %s", v.ptr, v.limit.RatString())
	}
	return fmt.Sprintf("%s *kind.OneOf", v.ptr)
}

// agree validates value with both and fails t when they differ on
// validity or on the set of failures (pointer, keyword, detail).
func agree(t *testing.T, label string, value any) {
	t.Helper()
	lib, err := libSchema()
	if err != nil {
		t.Fatal(err)
	}
	ours, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if verr := lib.Validate(value); verr != nil {
		ve, ok := verr.(*jsonschema.ValidationError)
		if !ok {
			t.Fatalf("%s: library: %v", label, verr)
		}
		want = libFailures(ve)
	}
	vs, err := check(ours, value, "", 0)
	if err != nil {
		t.Fatalf("%s: interpreter: %v", label, err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, ourLine(v))
	}
	slices.Sort(got)
	slices.Sort(want)
	if (len(got) == 0) != (len(want) == 0) || !slices.Equal(got, want) {
		t.Errorf("%s: %#v\ninterpreter: %q\nlibrary:     %q", label, value, got, want)
	}
}

// agreementSources are every contract source of the package's tests.
func agreementSources() []string {
	srcs := []string{full}
	for _, c := range parseDefaultCases {
		srcs = append(srcs, c.src)
	}
	for _, c := range parseErrorCases {
		srcs = append(srcs, c.src)
	}
	return srcs
}

func TestSchemaAgreesOnTestContracts(t *testing.T) {
	n := 0
	for _, src := range agreementSources() {
		if tr := treeOf([]byte(src)); tr != nil {
			agree(t, fmt.Sprintf("%q", src), tr.value)
			n++
		}
	}
	if n < 40 {
		t.Errorf("only %d test contracts reached validation", n)
	}
}

// replacements are values substituted at every position of a valid
// contract: each type, the edges of every bound, and valid and invalid
// strings for every pattern and enum.
var replacements = []any{
	nil, true, false, "", "x", "5m", "1h30m", ".5s", "0", "-1s", "5 minutes",
	"HOME", "X_API_KEY", "anthropic", "gemini", "exec", "deny",
	int64(-1), int64(0), int64(1), int64(2), int64(255), int64(256),
	2.5, 1.0, -0.5, 255.0000000001, 1e300,
	[]any{}, []any{"a"}, []any{""}, []any{int64(1)},
	[]any{map[string]any{"run": []any{"go"}}}, []any{map[string]any{"shell": int64(3)}},
	map[string]any{}, map[string]any{"shell": "x"}, map[string]any{"provider": "openai"},
	map[string]any{"act": "read", "effect": "ask", "pattern": "*"},
	map[string]any{"checks": []any{map[string]any{"run": []any{}}}, "bogus": true},
}

// variants calls fn with deep copies of v, each changed at one position:
// replaced by every replacement, deleted, or given an unknown key.
func variants(v any, fn func(label string, changed any)) {
	var walk func(path string, cur any, rebuild func(any) any)
	walk = func(path string, cur any, rebuild func(any) any) {
		for _, r := range replacements {
			fn(fmt.Sprintf("%s=%#v", path, r), rebuild(r))
		}
		switch cur := cur.(type) {
		case map[string]any:
			extra := maps.Clone(cur)
			extra["zz_unknown"] = int64(1)
			fn(path+"+zz_unknown", rebuild(extra))
			for _, k := range slices.Sorted(maps.Keys(cur)) {
				del := maps.Clone(cur)
				delete(del, k)
				fn(path+"-"+k, rebuild(del))
				walk(pointer(path, k), cur[k], func(x any) any {
					m := maps.Clone(cur)
					m[k] = x
					return rebuild(m)
				})
			}
		case []any:
			for i := range cur {
				walk(fmt.Sprintf("%s/%d", path, i), cur[i], func(x any) any {
					s := slices.Clone(cur)
					s[i] = x
					return rebuild(s)
				})
			}
		}
	}
	walk("", v, func(x any) any { return x })
}

func TestSchemaAgreesOnVariants(t *testing.T) {
	n := 0
	for _, src := range append(agreementSources(), "goal: g\nverify: [{shell: x, timeout: 1s, name: n, expect_exit: 3, network: true, report: \"junit:out/*.xml\"}]\n") {
		tr := treeOf([]byte(src))
		if tr == nil {
			continue
		}
		if _, err := Parse([]byte(src), "t.yaml"); err != nil {
			continue // variants of malformed contracts add little
		}
		variants(tr.value, func(label string, changed any) {
			agree(t, label, changed)
			n++
		})
	}
	if n < 1000 {
		t.Errorf("only %d variants", n)
	}
	t.Logf("%d variants agree", n)
}

func FuzzSchemaAgree(f *testing.F) {
	for _, src := range agreementSources() {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if tr := treeOf(data); tr != nil {
			agree(t, fmt.Sprintf("%q", data), tr.value)
		}
	})
}
