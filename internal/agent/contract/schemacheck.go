package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file interprets exactly the JSON Schema (draft 2020-12) subset that
// schema/task.schema.json uses, so the binary needs no general validator
// (whose package init compiles every draft's metaschema on each start).
// The schema file stays the single source of truth: it is read at first
// use, and a keyword this interpreter does not know is an error naming it.
// schema_agree_test.go checks it against a full implementation.

// schemaNode is one compiled (sub)schema.
type schemaNode struct {
	loc       string // where it is in the schema document: "#/$defs/duration"
	types     []string
	hasConst  bool
	constVal  any
	hasEnum   bool
	enum      []any
	required  []string
	props     map[string]*schemaNode
	closed    bool // additionalProperties: false
	items     *schemaNode
	ref       string
	refNode   *schemaNode
	oneOf     []*schemaNode
	pattern   *regexp.Regexp
	minLength int // -1 when absent
	minItems  int // -1 when absent
	minimum   *big.Rat
	maximum   *big.Rat
}

// annotations are keywords that never affect validation.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

var jsonTypes = []string{"null", "boolean", "object", "array", "string", "number", "integer"}

// compileSchema compiles a schema document, refusing any keyword outside
// the supported subset.
func compileSchema(data []byte) (*schemaNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema: want an object at the top level")
	}
	c := &schemaCompiler{defs: map[string]*schemaNode{}}
	if raw, ok := root["$defs"]; ok {
		defs, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("schema #/$defs: want an object")
		}
		for _, name := range sortedKeys(defs) {
			n, err := c.node(defs[name], "#/$defs/"+name)
			if err != nil {
				return nil, err
			}
			c.defs["#/$defs/"+name] = n
		}
	}
	top, err := c.node(root, "#")
	if err != nil {
		return nil, err
	}
	for _, n := range c.refs {
		target, ok := c.defs[n.ref]
		if !ok {
			return nil, fmt.Errorf("schema %s: $ref %q does not name an entry of $defs", n.loc, n.ref)
		}
		n.refNode = target
	}
	return top, nil
}

type schemaCompiler struct {
	defs map[string]*schemaNode
	refs []*schemaNode // nodes whose $ref is resolved once all defs exist
}

func (c *schemaCompiler) node(raw any, loc string) (*schemaNode, error) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %s: want an object schema, got %s (boolean schemas are not supported)", loc, typeName(raw))
	}
	n := &schemaNode{loc: loc, minLength: -1, minItems: -1}
	bad := func(kw, want string) error {
		return fmt.Errorf("schema %s/%s: want %s", loc, kw, want)
	}
	for _, kw := range sortedKeys(obj) {
		v := obj[kw]
		switch {
		case annotations[kw]:
		case kw == "$defs":
			if loc != "#" {
				return nil, fmt.Errorf("schema %s: $defs is supported only at the top level", loc)
			}
		case kw == "type":
			switch t := v.(type) {
			case string:
				n.types = []string{t}
			case []any:
				for _, x := range t {
					s, ok := x.(string)
					if !ok {
						return nil, bad(kw, "a type name or a list of them")
					}
					n.types = append(n.types, s)
				}
			default:
				return nil, bad(kw, "a type name or a list of them")
			}
			for _, t := range n.types {
				if !slices.Contains(jsonTypes, t) {
					return nil, fmt.Errorf("schema %s/type: unknown type %q", loc, t)
				}
			}
		case kw == "const":
			n.hasConst, n.constVal = true, v
		case kw == "enum":
			list, ok := v.([]any)
			if !ok {
				return nil, bad(kw, "an array")
			}
			n.hasEnum, n.enum = true, list
		case kw == "required":
			list, ok := v.([]any)
			if !ok {
				return nil, bad(kw, "an array of strings")
			}
			for _, x := range list {
				s, ok := x.(string)
				if !ok {
					return nil, bad(kw, "an array of strings")
				}
				n.required = append(n.required, s)
			}
		case kw == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil, bad(kw, "an object")
			}
			n.props = make(map[string]*schemaNode, len(props))
			for _, name := range sortedKeys(props) {
				sub, err := c.node(props[name], loc+"/properties/"+name)
				if err != nil {
					return nil, err
				}
				n.props[name] = sub
			}
		case kw == "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("schema %s/additionalProperties: only a boolean is supported", loc)
			}
			n.closed = !b
		case kw == "items":
			sub, err := c.node(v, loc+"/items")
			if err != nil {
				return nil, err
			}
			n.items = sub
		case kw == "$ref":
			s, ok := v.(string)
			if !ok || !strings.HasPrefix(s, "#/$defs/") || strings.ContainsAny(s[len("#/$defs/"):], "/~%") {
				return nil, fmt.Errorf("schema %s/$ref: only \"#/$defs/<name>\" is supported, got %v", loc, v)
			}
			n.ref = s
			c.refs = append(c.refs, n)
		case kw == "oneOf":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return nil, bad(kw, "a non-empty array of schemas")
			}
			for i, x := range list {
				sub, err := c.node(x, loc+"/oneOf/"+strconv.Itoa(i))
				if err != nil {
					return nil, err
				}
				n.oneOf = append(n.oneOf, sub)
			}
		case kw == "pattern":
			s, ok := v.(string)
			if !ok {
				return nil, bad(kw, "a string")
			}
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, fmt.Errorf("schema %s/pattern: %w", loc, err)
			}
			n.pattern = re
		case kw == "minLength", kw == "minItems":
			r, ok := numRat(v)
			if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() || r.Num().Int64() > math.MaxInt32 {
				return nil, bad(kw, "a non-negative integer")
			}
			if kw == "minLength" {
				n.minLength = int(r.Num().Int64())
			} else {
				n.minItems = int(r.Num().Int64())
			}
		case kw == "minimum", kw == "maximum":
			r, ok := numRat(v)
			if !ok {
				return nil, bad(kw, "a number")
			}
			if kw == "minimum" {
				n.minimum = r
			} else {
				n.maximum = r
			}
		default:
			return nil, fmt.Errorf("schema %s: unsupported keyword %q", loc, kw)
		}
	}
	return n, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
