package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
)

// binaryProbe is how much of a file is checked for a NUL byte: a file
// with one there is binary and not searched (ripgrep's rule).
const binaryProbe = 8 << 10

// GrepOptions selects what Grep searches.
type GrepOptions struct {
	Pattern    string
	Literal    bool
	IgnoreCase bool
	Globs      []string // include globs ("!glob" excludes), matched on relative paths
	Max        int      // 0: unlimited
	Dir        string   // relative sub-directory to search, "" for the root
	// Skip, when set, is asked about each file that has a match, before
	// its matches are kept: a file it names is left out of the result
	// and does not count against Max. It may be called concurrently.
	Skip func(rel string) bool
}

// Match is one matching line.
type Match struct {
	Path string // relative slash path
	Line int    // 1-based
	Text string // the line without its newline
}

// matcher is a compiled grep pattern.
type matcher struct {
	re    *regexp.Regexp // multi-line mode, so ^ and $ match at line ends
	pre   *prefilter     // nil: run the regex on the whole buffer
	exact bool           // a prefilter hit is a match: skip the regex
	max   int
	tq    *tquery // what a file with a matching line holds (index.go)
}

func compileGrep(o GrepOptions) (*matcher, error) {
	pat := o.Pattern
	if o.Literal {
		pat = regexp.QuoteMeta(pat)
	}
	flags := syntax.Perl
	if o.IgnoreCase {
		flags |= syntax.FoldCase
	}
	parsed, err := syntax.Parse(pat, flags)
	if err != nil {
		return nil, fmt.Errorf("grep: bad pattern %q: %w", o.Pattern, err)
	}
	prefix := "(?m)"
	if o.IgnoreCase {
		prefix = "(?mi)"
	}
	re, err := regexp.Compile(prefix + pat)
	if err != nil {
		return nil, fmt.Errorf("grep: bad pattern %q: %w", o.Pattern, err)
	}
	if o.Max < 0 {
		return nil, fmt.Errorf("grep: max must not be negative, got %d", o.Max)
	}
	m := &matcher{re: re, max: o.Max}
	simple := parsed.Simplify()
	m.pre, m.exact = newPrefilter(simple)
	m.tq = trigramQuery(simple)
	return m, nil
}

// search appends the matching lines of data (a whole file held in
// memory) to out; a binary file yields nothing.
func (m *matcher) search(rel string, data []byte, out []Match) []Match {
	if isBinary(data) {
		return out
	}
	found := 0
	out, _ = m.scanLines(rel, data, 1, &found, out)
	return out
}

// isBinary applies ripgrep's rule to the start of a file: a NUL byte in
// its first binaryProbe bytes makes it binary.
func isBinary(head []byte) bool {
	return bytes.IndexByte(head[:min(len(head), binaryProbe)], 0) >= 0
}

// scanLines appends the matching lines of data, whose first line has
// number line, to out; found counts matches across calls and stop reports
// that the match limit was reached.
func (m *matcher) scanLines(rel string, data []byte, line int, found *int, out []Match) (_ []Match, stop bool) {
	st := newFoldState()
	counted := 0 // line is the number of the line at offset counted
	for pos := 0; pos < len(data); {
		var at int
		if m.pre != nil {
			at = m.pre.index(data, pos, &st)
			if at < 0 {
				break
			}
		} else {
			loc := m.re.FindIndex(data[pos:])
			if loc == nil {
				break
			}
			at = pos + loc[0]
		}
		ls := bytes.LastIndexByte(data[:at], '\n') + 1
		le := bytes.IndexByte(data[at:], '\n')
		if le < 0 {
			le = len(data)
		} else {
			le += at
		}
		if ls == len(data) {
			break // the empty string after the final newline is not a line
		}
		text := data[ls:le]
		if m.exact || m.re.Match(text) {
			line += bytes.Count(data[counted:ls], []byte{'\n'})
			counted = ls
			out = append(out, Match{Path: rel, Line: line, Text: string(text)})
			*found++
			if m.max > 0 && *found >= m.max {
				return out, true
			}
		}
		pos = le + 1
	}
	return out, false
}

// bufPool recycles file read buffers across files and calls; each grows
// to at most maxLineLen+readChunk bytes.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, readChunk); return &b }}

// overlay is content that replaces or hides files on disk: open editor
// documents and pending changes.
type overlay struct {
	files   map[string][]byte // root-relative path → content
	deleted map[string]bool
}

// view is what a search reads: the disk with an overlay on top.
type view struct {
	root *Root
	ov   overlay
}

// inDir reports whether rel lies under dir ("." for all).
func inDir(rel, dir string) bool {
	return dir == "." || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// each walks the view under dir and calls visit (concurrently) with each
// file's relative path and absolute path, and its overlay content when the
// overlay holds it (ov true).
func (v *view) each(ctx context.Context, dir string, filter func(string, bool) bool, visit func(rel, abs string, data []byte, ov bool)) error {
	walkErr := v.root.walk(ctx, dir, filter, func(f walkFile) {
		if v.ov.deleted[f.rel] {
			return
		}
		data, ok := v.ov.files[f.rel]
		visit(f.rel, f.abs, data, ok)
	})
	if errors.Is(walkErr, fs.ErrNotExist) || errors.Is(walkErr, syscallENOTDIR) {
		// The directory may exist only in the overlay (new files).
		for rel := range v.ov.files {
			if inDir(rel, dir) && !v.ov.deleted[rel] {
				walkErr = nil
				break
			}
		}
	}
	if walkErr != nil {
		return walkErr
	}
	// Files that exist only in the overlay were not walked.
	for rel, data := range v.ov.files {
		if !inDir(rel, dir) || v.ov.deleted[rel] {
			continue
		}
		abs := v.root.join(rel)
		if _, err := os.Lstat(abs); err == nil {
			continue
		}
		if v.root.ignoredRel(rel) || (filter != nil && !filterPath(filter, rel, dir)) {
			continue
		}
		visit(rel, abs, data, true)
	}
	return nil
}

// filterPath applies a walk filter to an overlay-only file and each of its
// directories below dir.
func filterPath(filter func(string, bool) bool, rel, dir string) bool {
	parts := strings.Split(rel, "/")
	start := 0
	if dir != "." {
		start = strings.Count(dir, "/") + 1
	}
	for i := start + 1; i < len(parts); i++ {
		if !filter(strings.Join(parts[:i], "/"), true) {
			return false
		}
	}
	return filter(rel, false)
}

func (r *Root) join(rel string) string {
	return r.dir + string(os.PathSeparator) + strings.ReplaceAll(rel, "/", string(os.PathSeparator))
}

// grep runs a search over a view: through the root's index when it has
// a warm one, else by scanning. total counts the matches found, at
// least len(ms): each file's are counted up to o.Max, so past the cap it
// is a lower bound.
func (v *view) grep(ctx context.Context, o GrepOptions) (ms []Match, total int, _ error) {
	if x := v.root.idx.Load(); x != nil {
		if ms, total, ok, err := x.grep(ctx, v, o); ok {
			return ms, total, err
		}
	}
	m, err := compileGrep(o)
	if err != nil {
		return nil, 0, err
	}
	dir, err := CleanPath(o.Dir)
	if err != nil {
		return nil, 0, fmt.Errorf("grep: %w", err)
	}
	globs, err := newGlobFilter(o.Globs, dir)
	if err != nil {
		return nil, 0, err
	}
	res := results{skip: o.Skip}
	err = v.each(ctx, dir, globs.keep, func(rel, abs string, data []byte, ov bool) {
		res.add(m.searchOne(rel, abs, data, ov))
	})
	if err != nil {
		return nil, 0, fmt.Errorf("grep: %w", err)
	}
	ms, total = res.sorted(o.Max)
	return ms, total, nil
}

// searchOne searches one file: its overlay content when ov, else the file
// on disk.
func (m *matcher) searchOne(rel, abs string, data []byte, ov bool) []Match {
	if ov {
		return m.search(rel, data, nil)
	}
	bp := bufPool.Get().(*[]byte)
	found, _ := m.searchFile(rel, abs, bp)
	bufPool.Put(bp)
	return found
}

// results gathers matches from concurrent searches, one group per file
// (each already in line order).
type results struct {
	skip   func(rel string) bool // GrepOptions.Skip
	mu     sync.Mutex
	groups [][]Match
	n      int
}

func (r *results) add(found []Match) {
	if len(found) == 0 || (r.skip != nil && r.skip(found[0].Path)) {
		return
	}
	r.mu.Lock()
	r.groups = append(r.groups, found)
	r.n += len(found)
	r.mu.Unlock()
}

// sorted returns the matches by path then line, at most max (0: all),
// and how many were found: the files are sorted, not every match.
func (r *results) sorted(max int) ([]Match, int) {
	slices.SortFunc(r.groups, func(a, b []Match) int { return strings.Compare(a[0].Path, b[0].Path) })
	n := r.n
	if max > 0 && n > max {
		n = max
	}
	all := make([]Match, 0, n)
	for _, g := range r.groups {
		if len(all)+len(g) > n {
			g = g[:n-len(all)]
		}
		all = append(all, g...)
		if len(all) == n {
			break
		}
	}
	if len(all) == 0 {
		return nil, r.n
	}
	return all, r.n
}

// Grep searches the workspace on disk (documents overlaid), sorted by path
// then line.
func (r *Root) Grep(ctx context.Context, o GrepOptions) ([]Match, error) {
	v := &view{root: r, ov: overlay{files: r.documents()}}
	ms, _, err := v.grep(ctx, o)
	return ms, err
}
