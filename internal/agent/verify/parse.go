package verify

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ParseOptions tell the output parser where paths point.
type ParseOptions struct {
	// Root is the workspace's absolute directory; locations inside it are
	// made relative to it. "" keeps every path as printed.
	Root string
	// Dir is the check's working directory relative to Root ("" for Root):
	// relative paths in the output are relative to it.
	Dir string
	// Changed lists workspace-relative paths the change set wrote; they
	// count as existing even when the disk does not have them yet.
	Changed []string
}

// Parse turns compiler, linter and test output into locations, in output
// order without duplicates. It knows Go (compiler, vet and `go test`
// failures), Rust (rustc/cargo diagnostics and test panics), Python
// (tracebacks and pytest's path:line lines), TypeScript (both tsc formats),
// JavaScript stack traces (node), ESLint's stylish format and the generic
// `path:line:col: msg` and `path:line: msg` forms. Terminal colour codes are
// ignored.
//
// Paths inside Root come back workspace-relative; an absolute path outside
// it whose tail names a workspace file (the sandbox's staged copy of the
// tree) is mapped back onto the workspace; other paths stay as printed.
// Generic `path:line` matches are kept only when the file exists in the
// workspace or the change set, which keeps timestamps and URLs out.
func Parse(output string, o ParseOptions) []Location {
	p := &parser{opts: o, changed: map[string]bool{}, seen: map[Location]bool{}}
	for _, c := range o.Changed {
		p.changed[path.Clean(c)] = true
	}
	p.module = readModule(o.Root)
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		p.line(ansi.ReplaceAllString(strings.TrimRight(sc.Text(), "\r"), ""))
	}
	p.flush()
	return p.out
}

var ansi = &lazyRE{pat: `\x1b\[[0-9;?]*[A-Za-z]`}

// parser holds the state the multi-line formats need.
type parser struct {
	opts    ParseOptions
	changed map[string]bool
	module  string
	out     []Location
	seen    map[Location]bool

	goPending  []Location // go test messages of a test not yet known to fail
	goFailed   []Location // failing tests' messages waiting for their package line
	inGoFail   bool
	rustMsg    string    // last rust error/warning headline
	rustPanic  *Location // panic location waiting for its message line
	pyFrames   []Location
	jsMsg      string // last "XxxError: msg" line
	jsFound    bool   // the current JS stack already gave a location
	eslintFile string
}

// emit records a location once.
func (p *parser) emit(l Location) {
	l.Message = strings.TrimSpace(l.Message)
	if l.Path == "" || l.Line <= 0 || p.seen[l] {
		return
	}
	p.seen[l] = true
	p.out = append(p.out, l)
}

// flush resolves state left open at the end of the output.
func (p *parser) flush() {
	p.flushGo("")
	p.pyFrames = nil
	if p.rustPanic != nil {
		p.emit(*p.rustPanic)
		p.rustPanic = nil
	}
}

// exists reports whether a workspace-relative path is a file of the
// workspace or the change set.
func (p *parser) exists(rel string) bool {
	if p.changed[rel] {
		return true
	}
	if p.opts.Root == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(p.opts.Root, filepath.FromSlash(rel)))
	return err == nil
}

// resolve maps a printed path to a workspace-relative one when it can; the
// bool reports whether the result is a known workspace file.
func (p *parser) resolve(printed string) (string, bool) {
	s := strings.ReplaceAll(printed, `\`, "/")
	root := filepath.ToSlash(p.opts.Root)
	if path.IsAbs(s) || (len(s) > 2 && s[1] == ':') {
		if root != "" {
			if rel, ok := strings.CutPrefix(s, strings.TrimSuffix(root, "/")+"/"); ok {
				rel = path.Clean(rel)
				return rel, p.exists(rel)
			}
		}
		// A staged copy of the tree: find the longest tail that names a
		// workspace file.
		parts := strings.Split(strings.TrimPrefix(s, "/"), "/")
		for i := 1; i < len(parts); i++ {
			tail := strings.Join(parts[i:], "/")
			if p.exists(tail) {
				return tail, true
			}
		}
		return printed, false
	}
	rel := path.Clean(path.Join(filepath.ToSlash(p.opts.Dir), s))
	if p.exists(rel) {
		return rel, true
	}
	if c := path.Clean(s); p.exists(c) {
		return c, true
	}
	return rel, false
}

// readModule returns the module path in root/go.mod, "" when there is none.
func readModule(root string) string {
	if root == "" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
