package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// rule is one line of a gitignore-style file.
type rule struct {
	pattern  string // doublestar pattern, braces escaped
	negate   bool   // "!pattern": re-include
	dirOnly  bool   // "pattern/": directories only
	anchored bool   // contains a slash: matched on the path below the file's dir
	literal  bool   // no glob metacharacters: compare strings
}

// ruleSet is the rules of one ignore file, anchored at base (an absolute
// directory).
type ruleSet struct {
	base  string
	rules []rule
}

// parseIgnore parses gitignore syntax: comments, blank lines, "!"
// negation, trailing "/" for directories, a slash anywhere else anchoring
// the pattern to the file's directory, "**" in every position, and
// backslash escapes.
func parseIgnore(base string, data []byte) *ruleSet {
	s := &ruleSet{base: base}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		r, ok := parseRule(string(bytes.TrimSuffix(line, []byte("\r"))))
		if ok {
			s.rules = append(s.rules, r)
		}
	}
	if len(s.rules) == 0 {
		return nil
	}
	return s
}

func parseRule(line string) (rule, bool) {
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	var r rule
	switch {
	case strings.HasPrefix(line, "!"):
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return rule{}, false
	}
	r.anchored = strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
	if !doublestar.ValidatePattern(line) {
		return rule{}, false
	}
	r.pattern = line
	r.literal = !strings.ContainsAny(line, `*?[\`)
	return r, true
}

// match reports whether the set decides about abs (whose base name is
// name): matched is true when some rule matched, ignored whether the last
// matching rule ignores (rather than re-includes) the path.
func (s *ruleSet) match(abs, name string, isDir bool) (matched, ignored bool) {
	var rel string
	if strings.HasPrefix(abs, s.base) && len(abs) > len(s.base) && abs[len(s.base)] == filepath.Separator {
		rel = filepath.ToSlash(abs[len(s.base)+1:])
	} else {
		return false, false
	}
	for i := len(s.rules) - 1; i >= 0; i-- {
		r := &s.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		subject := name
		if r.anchored {
			subject = rel
		}
		var ok bool
		if r.literal {
			ok = subject == r.pattern
		} else {
			ok = doublestar.MatchUnvalidated(r.pattern, subject)
		}
		if ok {
			return true, !r.negate
		}
	}
	return false, false
}

// ignoreLevel is the ignore state of one directory: its own ignore files
// and a link to its parent's. Levels are immutable once built, so walker
// goroutines share them.
type ignoreLevel struct {
	parent    *ignoreLevel
	dotIgnore *ruleSet // .ignore
	gitIgnore *ruleSet // .gitignore, honoured only inside a git repository
	exclude   *ruleSet // .git/info/exclude of a repository rooted here
	inRepo    bool
	repoRoot  bool // the directory holds .git: git rules above it do not apply
}

// ignored applies ripgrep's precedence: .ignore files (deepest first) win
// over .gitignore files (deepest first), which win over the repository's
// info/exclude. Git rules stop at the innermost repository root: a nested
// repository does not see its parent's .gitignore.
func (l *ignoreLevel) ignored(abs, name string, isDir bool) bool {
	for lv := l; lv != nil; lv = lv.parent {
		if lv.dotIgnore != nil {
			if m, ig := lv.dotIgnore.match(abs, name, isDir); m {
				return ig
			}
		}
	}
	if l == nil || !l.inRepo {
		return false
	}
	for lv := l; lv != nil; lv = lv.parent {
		if lv.gitIgnore != nil {
			if m, ig := lv.gitIgnore.match(abs, name, isDir); m {
				return ig
			}
		}
		if lv.repoRoot {
			break
		}
	}
	for lv := l; lv != nil; lv = lv.parent {
		if lv.exclude != nil {
			if m, ig := lv.exclude.match(abs, name, isDir); m {
				return ig
			}
		}
		if lv.repoRoot {
			break
		}
	}
	return false
}

// child builds the level of dir given which special names it contains; it
// returns l itself when dir adds nothing.
func (l *ignoreLevel) child(dir string, hasIgnore, hasGitignore, hasGit bool) *ignoreLevel {
	inRepo := hasGit || (l != nil && l.inRepo)
	if !hasIgnore && !hasGitignore && !hasGit && (l == nil || l.inRepo == inRepo) {
		return l
	}
	n := &ignoreLevel{parent: l, inRepo: inRepo, repoRoot: hasGit}
	if hasIgnore {
		n.dotIgnore = readIgnore(dir, ".ignore")
	}
	if hasGitignore {
		n.gitIgnore = readIgnore(dir, ".gitignore")
	}
	if hasGit {
		n.exclude = readIgnoreAt(dir, filepath.Join(dir, ".git", "info", "exclude"))
	}
	return n
}

func readIgnore(dir, name string) *ruleSet {
	return readIgnoreAt(dir, filepath.Join(dir, name))
}

// readIgnoreAt reads an ignore file; an unreadable one counts as empty, as
// in git.
func readIgnoreAt(base, file string) *ruleSet {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return parseIgnore(base, data)
}

// exists reports whether name exists in dir (without following a final
// symlink).
func exists(dir, name string) bool {
	_, err := os.Lstat(filepath.Join(dir, name))
	return err == nil
}

// ancestorLevels builds the ignore levels of the directories above start
// (exclusive), from the top of its git repository (or from the workspace
// root when there is none) down, so a walk starting at start sees the rules
// a walk from the top would.
func ancestorLevels(root, start string) *ignoreLevel {
	top := root
	for d := root; ; {
		if exists(d, ".git") {
			top = d
			break
		}
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	var dirs []string
	for d := filepath.Dir(start); ; d = filepath.Dir(d) {
		if _, ok := within(top, d); !ok || d == start {
			break
		}
		dirs = append(dirs, d)
		if d == top {
			break
		}
	}
	var l *ignoreLevel
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		l = l.child(d, exists(d, ".ignore"), exists(d, ".gitignore"), exists(d, ".git"))
	}
	return l
}
