package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// pos is a 1-based line and column.
type pos struct{ line, col int }

// tree is a parsed document as plain JSON-like values (map[string]any,
// []any, string, int64, float64, bool, nil) plus the position of every
// value and of every mapping key, keyed by JSON pointer ("/verify/0/run").
type tree struct {
	value  any
	values map[string]pos // where each value starts
	keys   map[string]pos // where each mapping key is written
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 64

func pointer(parent, tok string) string {
	tok = strings.ReplaceAll(tok, "~", "~0")
	tok = strings.ReplaceAll(tok, "/", "~1")
	return parent + "/" + tok
}

func tokPos(t *token.Token) pos {
	if t == nil || t.Position == nil {
		return pos{}
	}
	return pos{t.Position.Line, t.Position.Column}
}

// nodePos is where a node's text starts: for a mapping, its first key.
func nodePos(n ast.Node) pos {
	switch n := n.(type) {
	case *ast.MappingNode:
		if !n.IsFlowStyle && len(n.Values) > 0 {
			return nodePos(n.Values[0].Key)
		}
		return tokPos(n.Start)
	case *ast.MappingValueNode:
		return nodePos(n.Key)
	case *ast.SequenceNode:
		return tokPos(n.Start)
	case *ast.AnchorNode:
		return tokPos(n.Start)
	case *ast.TagNode:
		return tokPos(n.Start)
	case *ast.LiteralNode:
		return tokPos(n.Start)
	}
	return tokPos(n.GetToken())
}

// build converts a YAML node into a tree; aliases are resolved against the
// anchors seen so far.
func build(body ast.Node) (*tree, *Error) {
	t := &tree{values: map[string]pos{}, keys: map[string]pos{}}
	b := builder{t: t, anchors: map[string]ast.Node{}}
	v, err := b.node(body, "", 0)
	if err != nil {
		return nil, err
	}
	t.value = v
	return t, nil
}

type builder struct {
	t       *tree
	anchors map[string]ast.Node
	nodes   int
}

// maxNodes bounds alias expansion ("billion laughs").
const maxNodes = 10000

func (b *builder) errAt(n ast.Node, ptr, msg string) *Error {
	p := nodePos(n)
	return &Error{Line: p.line, Col: p.col, Field: fieldOf(ptr), Msg: msg}
}

func (b *builder) node(n ast.Node, ptr string, depth int) (any, *Error) {
	if n == nil {
		b.t.values[ptr] = pos{}
		return nil, nil
	}
	b.nodes++
	if depth > maxDepth || b.nodes > maxNodes {
		return nil, b.errAt(n, ptr, "document is nested too deeply or too large")
	}
	if _, seen := b.t.values[ptr]; !seen {
		b.t.values[ptr] = nodePos(n)
	}
	switch n := n.(type) {
	case *ast.NullNode:
		return nil, nil
	case *ast.BoolNode:
		return n.Value, nil
	case *ast.IntegerNode:
		switch v := n.Value.(type) {
		case int64:
			return v, nil
		case uint64:
			return json.Number(strconv.FormatUint(v, 10)), nil
		}
		return nil, b.errAt(n, ptr, fmt.Sprintf("bad integer %q", n.Token.Value))
	case *ast.FloatNode:
		return n.Value, nil
	case *ast.InfinityNode, *ast.NanNode:
		return nil, b.errAt(n, ptr, "infinite and NaN numbers are not allowed")
	case *ast.StringNode:
		if v, ok := plainNumber(n); ok {
			return v, nil
		}
		return n.Value, nil
	case *ast.LiteralNode:
		if n.Value == nil {
			return "", nil
		}
		return n.Value.Value, nil
	case *ast.TagNode:
		return b.node(n.Value, ptr, depth+1)
	case *ast.AnchorNode:
		if name, ok := n.Name.(*ast.StringNode); ok {
			b.anchors[name.Value] = n.Value
		}
		return b.node(n.Value, ptr, depth+1)
	case *ast.AliasNode:
		name := ""
		if s, ok := n.Value.(*ast.StringNode); ok {
			name = s.Value
		}
		target, ok := b.anchors[name]
		if !ok {
			return nil, b.errAt(n, ptr, fmt.Sprintf("unknown alias %q", name))
		}
		return b.node(target, ptr, depth+1)
	case *ast.MappingNode:
		return b.mapping(n.Values, ptr, depth)
	case *ast.MappingValueNode:
		return b.mapping([]*ast.MappingValueNode{n}, ptr, depth)
	case *ast.SequenceNode:
		out := make([]any, 0, len(n.Values))
		for i, item := range n.Values {
			v, err := b.node(item, pointer(ptr, strconv.Itoa(i)), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, b.errAt(n, ptr, fmt.Sprintf("unsupported YAML node %s", n.Type()))
}

func (b *builder) mapping(values []*ast.MappingValueNode, ptr string, depth int) (any, *Error) {
	out := make(map[string]any, len(values))
	seen := make(map[string]bool, len(values))
	for _, mv := range values {
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			return nil, b.errAt(mv.Key, ptr, "merge keys (<<) are not supported")
		}
		key, ok := scalarKey(mv.Key)
		if !ok {
			return nil, b.errAt(mv.Key, ptr, "mapping keys must be plain strings")
		}
		kp := pointer(ptr, key)
		if _, dup := seen[key]; dup {
			return nil, b.errAt(mv.Key, kp, "duplicate key")
		}
		seen[key] = true
		// A key with no value (`verify:`) or null counts as omitted, so
		// its default applies.
		if mv.Value == nil || isNull(mv.Value) {
			continue
		}
		b.t.keys[kp] = nodePos(mv.Key)
		v, err := b.node(mv.Value, kp, depth+1)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return ok
}

func scalarKey(n ast.Node) (string, bool) {
	switch k := n.(type) {
	case *ast.StringNode:
		return k.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return k.GetToken().Value, true
	case *ast.MappingKeyNode:
		return scalarKey(k.Value)
	}
	return "", false
}

// fieldOf turns a JSON pointer into the dotted field path users read:
// /verify/checks/0/timeout → verify.checks[0].timeout.
func fieldOf(ptr string) string {
	if ptr == "" {
		return ""
	}
	var sb strings.Builder
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(tok)
	}
	return sb.String()
}

// yamlNumber is the YAML 1.2 core schema's int and float syntax.
var yamlNumber = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
})

// plainNumber reads a plain (unquoted) scalar the YAML parser left as a
// string although YAML 1.2 makes it a number: an exponent form (1e6) or
// an integer too large for int64. A whole value becomes a json.Number of
// its digits (1e6 is 1000000, so it fits an integer field), any other a
// float64; a field too small for the value says so when the contract is
// decoded (convert).
func plainNumber(n *ast.StringNode) (any, bool) {
	if n.Token == nil || n.Token.Type != token.StringType || len(n.Value) > 400 || !yamlNumber().MatchString(n.Value) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(strings.TrimPrefix(n.Value, "+"))
	if !ok {
		return nil, false
	}
	if r.IsInt() {
		return json.Number(r.Num().String()), true
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, false
	}
	return f, true
}
