// Command codeshape prints the function-size and file-size histograms of
// the module's Go code (tests apart): the figures a change to the layout
// must leave no worse. Run it from the module root:
//
//	go run ./bench/codeshape
//
// or give it a directory (a clone of an older commit, to compare).
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

var funcBuckets = []int{10, 25, 50, 100, 200}
var fileBuckets = []int{100, 200, 400, 800}

type hist struct {
	edges  []int
	counts []int
	n, sum int
	max    int
	maxAt  string
}

func newHist(edges []int) *hist { return &hist{edges: edges, counts: make([]int, len(edges)+1)} }

func (h *hist) add(v int, at string) {
	// bucket i holds values in (edges[i-1], edges[i]]
	i := 0
	for i < len(h.edges) && v > h.edges[i] {
		i++
	}
	h.counts[i]++
	h.n++
	h.sum += v
	if v > h.max {
		h.max, h.maxAt = v, at
	}
}

func (h *hist) print(name string) {
	fmt.Printf("%s: n=%d mean=%.1f max=%d (%s)\n", name, h.n, float64(h.sum)/float64(max(h.n, 1)), h.max, h.maxAt)
	lo := 0
	for i, c := range h.counts {
		label := ""
		if i < len(h.edges) {
			label = fmt.Sprintf("%d-%d", lo+1, h.edges[i])
			lo = h.edges[i]
		} else {
			label = fmt.Sprintf(">%d", lo)
		}
		fmt.Printf("  %-9s %5d  %5.1f%%\n", label, c, 100*float64(c)/float64(max(h.n, 1)))
	}
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	fset := token.NewFileSet()
	fn, fnT := newHist(funcBuckets), newHist(funcBuckets)
	fl, flT := newHist(fileBuckets), newHist(fileBuckets)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		test := strings.HasSuffix(p, "_test.go")
		lines := fset.File(f.Pos()).LineCount()
		if test {
			flT.add(lines, p)
		} else {
			fl.add(lines, p)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			at := fmt.Sprintf("%s:%s", p, fd.Name.Name)
			if test {
				fnT.add(n, at)
			} else {
				fn.add(n, at)
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "codeshape:", err)
		os.Exit(1)
	}
	fn.print("function lines (non-test)")
	fl.print("file lines (non-test)")
	fnT.print("function lines (tests)")
	flT.print("file lines (tests)")
}
