package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// rule is one pattern line of a gitignore-style file, parsed as git's
// dir.c parses it.
type rule struct {
	pattern   string // without "!" and the trailing "/"; escapes kept for wildmatch
	negate    bool   // "!pattern": re-include
	mustBeDir bool   // "pattern/": directories only
	noDir     bool   // no slash: matched on the base name at any depth
	prefix    int    // length of the leading part without glob characters
}

// ruleSet is the rules of one ignore file, anchored at base (an absolute
// directory).
type ruleSet struct {
	base  string
	rules []rule
}

// parseIgnore parses gitignore(5) syntax: a UTF-8 byte order mark is
// skipped, "#" starts a comment, trailing spaces are dropped unless
// escaped, "!" negates, one trailing "/" selects directories, a slash
// anywhere else anchors the pattern to the file's directory, and the rest
// is a wildmatch glob ("*", "?", classes, "**", backslash escapes).
func parseIgnore(base string, data []byte) *ruleSet {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	s := &ruleSet{base: base}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if r, ok := parseRule(string(bytes.TrimSuffix(line, []byte("\r")))); ok {
			s.rules = append(s.rules, r)
		}
	}
	if len(s.rules) == 0 {
		return nil
	}
	return s
}

// trimTrailingSpaces drops unescaped trailing spaces (not tabs), as git's
// trim_trailing_spaces does; a line ending in a lone backslash is kept.
func trimTrailingSpaces(line string) string {
	lastSpace := -1
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(line) {
				return line
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return line[:lastSpace]
	}
	return line
}

func parseRule(line string) (rule, bool) {
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	line = trimTrailingSpaces(line)
	var r rule
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.mustBeDir = true
		line = line[:len(line)-1]
	}
	if line == "" {
		return rule{}, false
	}
	r.noDir = !strings.Contains(line, "/")
	r.pattern = line
	r.prefix = len(line)
	if i := strings.IndexAny(line, `*?[\`); i >= 0 {
		r.prefix = i
	}
	return r, true
}

// matches reports whether the rule matches rel (the path below the rule
// file's directory, slash-separated) whose base name is name, as git's
// match_basename and match_pathname do.
func (r *rule) matches(rel, name string, isDir bool) bool {
	if r.mustBeDir && !isDir {
		return false
	}
	if r.noDir {
		if r.prefix == len(r.pattern) {
			return name == r.pattern
		}
		return wildmatch(r.pattern, name, false)
	}
	pat, prefix := r.pattern, r.prefix
	if pat[0] == '/' {
		pat, prefix = pat[1:], prefix-1
	}
	// The part before the first glob character is compared as a string;
	// git then matches only the rest, so a "**" right after that part
	// counts as standing at the start of the pattern.
	if prefix > 0 {
		if prefix > len(rel) || rel[:prefix] != pat[:prefix] {
			return false
		}
		pat, rel = pat[prefix:], rel[prefix:]
		if pat == "" {
			return rel == ""
		}
	}
	return wildmatch(pat, rel, true)
}

// match reports whether the set decides about abs (whose base name is
// name): matched is true when some rule matched, ignored whether the last
// matching rule ignores (rather than re-includes) the path.
func (s *ruleSet) match(abs, name string, isDir bool) (matched, ignored bool) {
	if s == nil || !strings.HasPrefix(abs, s.base) || len(abs) <= len(s.base) || abs[len(s.base)] != filepath.Separator {
		return false, false
	}
	rel := filepath.ToSlash(abs[len(s.base)+1:])
	for i := len(s.rules) - 1; i >= 0; i-- {
		if s.rules[i].matches(rel, name, isDir) {
			return true, !s.rules[i].negate
		}
	}
	return false, false
}

// ignoreLevel is the ignore state of one directory: its own ignore files
// and a link to its parent's. Levels are immutable once built, so walker
// goroutines share them.
type ignoreLevel struct {
	parent    *ignoreLevel
	dotIgnore *ruleSet   // .ignore
	gitIgnore *ruleSet   // .gitignore, honoured only inside a git repository
	exclude   []*ruleSet // of a repository rooted here: info/exclude, then the global excludes file
	inRepo    bool
	repoRoot  bool // the directory holds .git: git rules above it do not apply
}

// ignored applies the precedence of gitignore(5), with ripgrep's .ignore
// files on top: .ignore files (deepest first) win over .gitignore files
// (deepest first), which win over the repository's info/exclude, which
// wins over the user's global excludes file (core.excludesFile). Git rules
// stop at the innermost repository root: a nested repository does not see
// its parent's .gitignore.
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
		for _, s := range lv.exclude {
			if m, ig := s.match(abs, name, isDir); m {
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
		n.exclude = repoExcludes(dir)
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

// repoTop is the top of the git repository holding dir: the nearest
// directory at or above it with a .git entry; ok is false when there is
// none.
func repoTop(dir string) (top string, ok bool) {
	for d := dir; ; {
		if exists(d, ".git") {
			return d, true
		}
		p := filepath.Dir(d)
		if p == d {
			return "", false
		}
		d = p
	}
}

// ancestorLevels builds the ignore levels of the directories above start
// (exclusive), from the top of its git repository (or from the workspace
// root when there is none) down, so a walk starting at start sees the rules
// a walk from the top would.
func ancestorLevels(root, start string) *ignoreLevel {
	top, ok := repoTop(root)
	if !ok {
		top = root
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
