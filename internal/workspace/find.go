package workspace

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// globFilter applies grep's --glob filters the way ripgrep's overrides
// do: globs are gitignore-style patterns relative to the searched
// directory; "glob" whitelists, "!glob" excludes, the last matching glob
// wins, and when any whitelist glob is given a file must match one.
// Excluding globs also prune directories.
type globFilter struct {
	rules      []globRule
	hasInclude bool
	dir        string // clean root-relative dir the globs are relative to
}

func newGlobFilter(globs []string, dir string) (*globFilter, error) {
	if len(globs) == 0 {
		return nil, nil
	}
	g := &globFilter{dir: dir}
	for _, s := range globs {
		r, ok := parseGlobRule(s)
		if !ok {
			return nil, fmt.Errorf("grep: bad glob %q", s)
		}
		if !r.negate {
			g.hasInclude = true
		}
		g.rules = append(g.rules, r)
	}
	return g, nil
}

// globRule is one --glob: a doublestar pattern (ripgrep's globs take
// "{a,b}" alternatives, gitignore lines do not).
type globRule struct {
	pattern  string
	negate   bool // "!glob": exclude
	dirOnly  bool // "glob/"
	anchored bool // has a slash: matched on the path below the searched dir
}

func parseGlobRule(s string) (globRule, bool) {
	var r globRule
	if rest, ok := strings.CutPrefix(s, "!"); ok {
		r.negate, s = true, rest
	}
	if strings.HasSuffix(s, "/") {
		r.dirOnly = true
		s = strings.TrimRight(s, "/")
	}
	if s == "" {
		return globRule{}, false
	}
	r.anchored = strings.Contains(s, "/")
	s = strings.TrimPrefix(s, "/")
	if !doublestar.ValidatePattern(s) {
		return globRule{}, false
	}
	r.pattern = s
	return r, true
}

// keep is a walk filter.
func (g *globFilter) keep(rel string, isDir bool) bool {
	if g == nil {
		return true
	}
	sub := rel
	if g.dir != "." {
		sub = strings.TrimPrefix(rel, g.dir+"/")
	}
	name := path.Base(sub)
	for i := len(g.rules) - 1; i >= 0; i-- {
		r := &g.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		subject := name
		if r.anchored {
			subject = sub
		}
		if doublestar.MatchUnvalidated(r.pattern, subject) {
			return !r.negate
		}
	}
	return isDir || !g.hasInclude
}

// find lists the view's files whose root-relative path matches glob.
func (v *view) find(ctx context.Context, glob string) ([]string, error) {
	glob = strings.TrimPrefix(glob, "./")
	if glob == "" || !doublestar.ValidatePattern(glob) {
		return nil, fmt.Errorf("find: bad glob %q", glob)
	}
	if _, err := CleanPath(glob); err != nil {
		return nil, fmt.Errorf("find: %w", err)
	}
	var mu sync.Mutex
	var out []string
	err := v.each(ctx, ".", nil, func(rel, _ string, _ []byte, _ bool) {
		if doublestar.MatchUnvalidated(glob, rel) {
			mu.Lock()
			out = append(out, rel)
			mu.Unlock()
		}
	})
	if err != nil {
		return nil, fmt.Errorf("find: %w", err)
	}
	slices.Sort(out)
	return out, nil
}

// Find lists relative paths matching a ** glob, sorted, gitignore-aware.
func (r *Root) Find(ctx context.Context, glob string) ([]string, error) {
	v := &view{root: r, ov: overlay{files: r.documents()}}
	return v.find(ctx, glob)
}
