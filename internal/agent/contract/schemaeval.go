package contract

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
)

type violationKind int

const (
	vType violationKind = iota
	vConst
	vEnum
	vRequired
	vAdditional
	vMinLength
	vMinItems
	vPattern
	vMinimum
	vMaximum
	vOneOfSeveral // more than one oneOf branch matched
)

// violation is one leaf failure of a value against a schema.
type violation struct {
	ptr       string // JSON pointer of the failing value
	kind      violationKind
	schemaLoc string   // the subschema holding the failed keyword
	names     []string // vRequired: missing; vAdditional: unknown
	known     []string // vAdditional: the properties that may stand there
	want      []string // vType
	got       string   // vType: the value's type
	value     any      // the failing value
	allowed   []any    // vConst (one) and vEnum
	limit     *big.Rat // vMinimum, vMaximum
}

// maxSchemaDepth bounds the interpreter's recursion; the instance is at
// most maxDepth deep, so only a $ref cycle in the schema can reach it.
const maxSchemaDepth = 8 * maxDepth

// check validates v (a tree value) at ptr against n and returns its leaf
// failures. Like a full validator, a type, const or enum failure stops
// the other keywords of the same subschema. For oneOf with no matching
// branch it keeps the failures of the branches whose shape matches, so a
// bad check inside verify is reported as that, not as "want array"; when
// every branch fails on type alone, their wanted types are merged.
func check(n *schemaNode, v any, ptr string, depth int) ([]violation, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema %s: recursion deeper than %d (a $ref cycle?)", n.loc, maxSchemaDepth)
	}
	at := func(k violationKind) violation {
		return violation{ptr: ptr, kind: k, schemaLoc: n.loc, value: v}
	}
	got := typeName(v)
	if got == "" {
		return nil, fmt.Errorf("validate %s: unsupported value %T", ptr, v)
	}
	if len(n.types) > 0 && !slices.Contains(n.types, got) &&
		!(got == "number" && slices.Contains(n.types, "integer") && isInteger(v)) {
		e := at(vType)
		e.want, e.got = n.types, got
		return []violation{e}, nil
	}
	if n.hasConst && !equal(v, n.constVal) {
		e := at(vConst)
		e.allowed = []any{n.constVal}
		return []violation{e}, nil
	}
	if n.hasEnum && !slices.ContainsFunc(n.enum, func(w any) bool { return equal(v, w) }) {
		e := at(vEnum)
		e.allowed = n.enum
		return []violation{e}, nil
	}
	var out []violation
	if n.refNode != nil {
		sub, err := check(n.refNode, v, ptr, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	switch v := v.(type) {
	case map[string]any:
		var missing []string
		for _, name := range n.required {
			if _, ok := v[name]; !ok {
				missing = append(missing, name)
			}
		}
		if missing != nil {
			e := at(vRequired)
			e.names = missing
			out = append(out, e)
		}
		var unknown []string
		for _, name := range sortedKeys(v) {
			sub, ok := n.props[name]
			if !ok {
				if n.closed {
					unknown = append(unknown, name)
				}
				continue
			}
			errs, err := check(sub, v[name], pointer(ptr, name), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, errs...)
		}
		if unknown != nil {
			e := at(vAdditional)
			e.names, e.known = unknown, slices.Sorted(maps.Keys(n.props))
			out = append(out, e)
		}
	case []any:
		if n.minItems >= 0 && len(v) < n.minItems {
			out = append(out, at(vMinItems))
		}
		if n.items != nil {
			for i, item := range v {
				errs, err := check(n.items, item, pointer(ptr, strconv.Itoa(i)), depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, errs...)
			}
		}
	case string:
		if n.minLength >= 0 && utf8.RuneCountInString(v) < n.minLength {
			out = append(out, at(vMinLength))
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			out = append(out, at(vPattern))
		}
	default:
		if r, ok := numRat(v); ok {
			if n.minimum != nil && r.Cmp(n.minimum) < 0 {
				e := at(vMinimum)
				e.limit = n.minimum
				out = append(out, e)
			}
			if n.maximum != nil && r.Cmp(n.maximum) > 0 {
				e := at(vMaximum)
				e.limit = n.maximum
				out = append(out, e)
			}
		}
	}
	if len(n.oneOf) > 0 {
		errs, err := checkOneOf(n, v, ptr, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, errs...)
	}
	return out, nil
}

func checkOneOf(n *schemaNode, v any, ptr string, depth int) ([]violation, error) {
	var failed [][]violation
	matched := 0
	for _, branch := range n.oneOf {
		errs, err := check(branch, v, ptr, depth+1)
		if err != nil {
			return nil, err
		}
		if len(errs) == 0 {
			matched++
			continue
		}
		failed = append(failed, errs)
	}
	switch {
	case matched == 1:
		return nil, nil
	case matched > 1:
		return []violation{{ptr: ptr, kind: vOneOfSeveral, schemaLoc: n.loc, value: v}}, nil
	}
	var kept []violation
	var wants []string
	got := ""
	for _, errs := range failed {
		if len(errs) == 1 && errs[0].ptr == ptr && errs[0].kind == vType {
			wants = append(wants, errs[0].want...)
			got = errs[0].got
			continue
		}
		kept = append(kept, errs...)
	}
	if len(kept) == 0 {
		return []violation{{ptr: ptr, kind: vType, schemaLoc: n.loc, value: v, want: wants, got: got}}, nil
	}
	return kept, nil
}

// typeName is the JSON type of a tree value ("" for anything else). Every
// number is "number"; "integer" is matched by value.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return "number"
	case int64, int, json.Number:
		return "number"
	}
	return ""
}

// numRat is a number's exact value; a float is taken as the shortest
// decimal that round-trips, the way JSON text would write it.
func numRat(v any) (*big.Rat, bool) {
	switch v := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(v), true
	case int:
		return new(big.Rat).SetInt64(int64(v)), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}
		return new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	case json.Number:
		return new(big.Rat).SetString(string(v))
	}
	return nil, false
}

func isInteger(v any) bool {
	r, ok := numRat(v)
	return ok && r.IsInt()
}

// equal is JSON equality: numbers by value, objects and arrays deeply.
func equal(a, b any) bool {
	if ra, ok := numRat(a); ok {
		rb, ok := numRat(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, equal)
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equal(va, vb) {
				return false
			}
		}
		return true
	}
	return false
}
