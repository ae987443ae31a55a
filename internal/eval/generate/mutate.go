// Package generate makes an evaluation suite from a Go repository by
// mutating its tested code: a comparison flipped, a statement dropped, an
// integer off by one, two arguments swapped, each in a statement the
// package's tests cover. A mutation is kept only when a test fails with it
// and passes with the original restored; each kept one is a task whose
// check is that test and whose goal is written from its failing output.
// The same repository, packages, count and seed give the same suite.
package generate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
)

// Kind is a kind of mutation.
type Kind string

// The kinds of mutation.
const (
	Flip     Kind = "flip"       // a comparison operator replaced by its negation
	Drop     Kind = "drop"       // a statement removed
	OffByOne Kind = "off-by-one" // an integer literal n replaced by n+1
	Swap     Kind = "swap"       // a call's first two arguments swapped
)

// Site is one mutation of one file: the bytes [Start, End) replaced by
// New.
type Site struct {
	File       string // absolute
	Func       string
	Kind       Kind
	Line       int
	Start, End int
	Old, New   string
}

// Apply returns src with the mutation made.
func (s Site) Apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(s.New))
	out = append(out, src[:s.Start]...)
	out = append(out, s.New...)
	return append(out, src[s.End:]...)
}

var negation = map[token.Token]token.Token{
	token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
}

// sites lists the mutations of one file's function bodies whose place
// covered says the tests run, in source order.
func sites(path string, src []byte, covered func(line, col int) bool) ([]Site, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Site
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		c := collector{fset: fset, src: src, path: path, fn: fd.Name.Name, covered: covered}
		ast.Inspect(fd.Body, c.visit)
		out = append(out, c.out...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

type collector struct {
	fset    *token.FileSet
	src     []byte
	path    string
	fn      string
	covered func(line, col int) bool
	out     []Site
	// posts are the loops' post statements: dropping one makes an
	// endless loop, not a failing test.
	posts map[ast.Stmt]bool
}

func (c *collector) add(kind Kind, from, to token.Pos, repl string) {
	p := c.fset.Position(from)
	if !c.covered(p.Line, p.Column) {
		return
	}
	start, end := c.fset.Position(from).Offset, c.fset.Position(to).Offset
	old := string(c.src[start:end])
	if old == repl {
		return
	}
	c.out = append(c.out, Site{File: c.path, Func: c.fn, Kind: kind, Line: p.Line, Start: start, End: end, Old: old, New: repl})
}

func (c *collector) text(n ast.Node) string {
	return string(c.src[c.fset.Position(n.Pos()).Offset:c.fset.Position(n.End()).Offset])
}

func (c *collector) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.ForStmt:
		if n.Post != nil {
			if c.posts == nil {
				c.posts = map[ast.Stmt]bool{}
			}
			c.posts[n.Post] = true
		}
	case *ast.BinaryExpr:
		if neg, ok := negation[n.Op]; ok {
			c.add(Flip, n.OpPos, n.OpPos+token.Pos(len(n.Op.String())), neg.String())
		}
		for _, side := range []ast.Expr{n.X, n.Y} {
			c.offByOne(side)
		}
	case *ast.IndexExpr:
		c.offByOne(n.Index)
	case *ast.SliceExpr:
		for _, e := range []ast.Expr{n.Low, n.High} {
			c.offByOne(e)
		}
	case *ast.AssignStmt:
		if n.Tok != token.DEFINE && !c.posts[n] {
			c.add(Drop, n.Pos(), n.End(), "")
		}
		for _, r := range n.Rhs {
			c.offByOne(r)
		}
	case *ast.IncDecStmt:
		if !c.posts[n] {
			c.add(Drop, n.Pos(), n.End(), "")
		}
	case *ast.ExprStmt:
		if _, call := n.X.(*ast.CallExpr); call {
			c.add(Drop, n.Pos(), n.End(), "")
		}
	case *ast.CallExpr:
		if len(n.Args) >= 2 && n.Ellipsis == token.NoPos {
			a, b := c.text(n.Args[0]), c.text(n.Args[1])
			if a != b {
				between := string(c.src[c.fset.Position(n.Args[0].End()).Offset:c.fset.Position(n.Args[1].Pos()).Offset])
				c.add(Swap, n.Args[0].Pos(), n.Args[1].End(), b+between+a)
			}
		}
	}
	return true
}

// offByOne adds n+1 for an integer literal e.
func (c *collector) offByOne(e ast.Expr) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return
	}
	v, err := strconv.ParseInt(lit.Value, 0, 64)
	if err != nil {
		return
	}
	c.add(OffByOne, lit.Pos(), lit.End(), strconv.FormatInt(v+1, 10))
}

// covers is a coverage profile's covered blocks of one file.
type covers []block

type block struct {
	startLine, startCol, endLine, endCol int
}

func (cs covers) has(line, col int) bool {
	for _, b := range cs {
		after := line > b.startLine || line == b.startLine && col >= b.startCol
		before := line < b.endLine || line == b.endLine && col < b.endCol
		if after && before {
			return true
		}
	}
	return false
}

// parseProfile reads a `go test -coverprofile` file: for each file (as
// the profile names it, import path/file.go) the blocks run at least
// once.
func parseProfile(data []byte) map[string]covers {
	out := map[string]covers{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		// example.com/calc/calc.go:5.31,7.2 1 1
		colon := bytes.LastIndexByte(line, ':')
		if colon < 0 || bytes.HasPrefix(line, []byte("mode:")) {
			continue
		}
		var b block
		var stmts, count int
		if _, err := fmt.Sscanf(string(line[colon+1:]), "%d.%d,%d.%d %d %d", &b.startLine, &b.startCol, &b.endLine, &b.endCol, &stmts, &count); err != nil || count == 0 {
			continue
		}
		name := string(line[:colon])
		out[name] = append(out[name], b)
	}
	return out
}
