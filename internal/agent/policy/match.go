package policy

import (
	"fmt"
	"net"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Matching is conservative in one direction: where a target could be read
// two ways (letter case on a case-insensitive file system, a program named
// by its full path, a host without a port), deny and ask rules match if
// either reading matches, and allow rules only if the strict reading does.
// A rule whose pattern starts with "!" matches what the rest does not
// match; its inner match flips the direction, so a negated deny rule still
// denies more rather than less.

// matcher is a compiled rule pattern.
type matcher interface {
	// match reports whether the target matches. loose selects the broad
	// reading used by deny and ask rules.
	match(t *target, loose bool) bool
}

// target is a check's subject in the forms the matchers need.
type target struct {
	path string   // read/write: cleaned workspace-relative slash path
	argv []string // exec
	host string   // net, lower case
	port string   // net, "" when unknown
	mcp  string   // mcp: "server/tool"
}

// compile validates a rule and builds its matcher.
func compile(r Rule) (matcher, error) {
	switch r.Effect {
	case Allow, Ask, Deny:
	default:
		return nil, fmt.Errorf("%w: unknown effect %q (want allow, ask or deny)", ErrInvalidRule, r.Effect)
	}
	p := r.Pattern
	if strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf("%w: empty pattern", ErrInvalidRule)
	}
	negate := false
	if r.Act == ActRead || r.Act == ActWrite {
		if strings.HasPrefix(p, "!") {
			negate, p = true, p[1:]
		}
	}
	var m matcher
	var err error
	switch r.Act {
	case ActRead, ActWrite:
		m, err = compilePath(p)
	case ActExec:
		m, err = compileArgv(p)
	case ActNet:
		m, err = compileNet(p)
	case ActMCP:
		m, err = compileMCP(p)
	default:
		return nil, fmt.Errorf("%w: unknown act %q (want read, write, exec, net or mcp)", ErrInvalidRule, r.Act)
	}
	if err != nil {
		return nil, err
	}
	if negate {
		return negated{m}, nil
	}
	return m, nil
}

type negated struct{ inner matcher }

func (n negated) match(t *target, loose bool) bool { return !n.inner.match(t, !loose) }

// pathMatcher is a doublestar glob on the workspace-relative slash path.
type pathMatcher struct{ glob, lower string }

func compilePath(p string) (matcher, error) {
	if err := CheckPathGlob(p); err != nil {
		return nil, fmt.Errorf("%w: path pattern %w", ErrInvalidRule, err)
	}
	p = strings.TrimPrefix(p, "./")
	return pathMatcher{glob: p, lower: strings.ToLower(p)}, nil
}

func (m pathMatcher) match(t *target, loose bool) bool {
	if t.path == "" {
		return false
	}
	if ok, _ := doublestar.Match(m.glob, t.path); ok {
		return true
	}
	if !loose {
		return false
	}
	// Case-insensitive file systems (macOS, Windows) make .GIT/config the
	// same file as .git/config, and they fold more than case (fold).
	ok, _ := doublestar.Match(m.lower, fold(t.path))
	return ok
}

// fold is the loose reading of a path: the name a case-insensitive file
// system may store it under. Letters are lower-cased; code points HFS+
// ignores in names are dropped (".git\u200c" is .git there); each
// element loses what Windows drops or reads as a stream (trailing dots
// and spaces, ":stream"); and "git~1", the 8.3 short name of .git, reads
// as .git.
func fold(p string) string {
	p = strings.ToLower(p)
	p = strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x206f, r == 0xfeff, r == 0xad:
			return -1
		}
		return r
	}, p)
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if j := strings.IndexByte(s, ':'); j > 0 {
			s = s[:j]
		}
		if t := strings.TrimRight(s, ". "); t != "" {
			s = t
		}
		if len(s) == 5 && strings.HasPrefix(s, "git~") && s[4] >= '1' && s[4] <= '9' {
			s = ".git"
		}
		segs[i] = s
	}
	return strings.Join(segs, "/")
}

// argvMatcher matches an argv element by element. Each pattern token is a
// glob over one element where * and ? cross "/" (argv elements are not
// paths). A lone "**" token matches zero or more elements anywhere; a lone
// "*" token as the last token matches zero or more remaining elements;
// elsewhere a lone "*" matches exactly one element.
type argvMatcher struct{ tokens []string }

func compileArgv(p string) (matcher, error) {
	toks := strings.Fields(p)
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: empty argv pattern", ErrInvalidRule)
	}
	for _, tok := range toks {
		if err := validateToken(tok); err != nil {
			return nil, fmt.Errorf("%w: argv pattern %q: %w", ErrInvalidRule, p, err)
		}
	}
	if toks[len(toks)-1] == "*" {
		toks[len(toks)-1] = "**"
	}
	return argvMatcher{tokens: toks}, nil
}

func (m argvMatcher) match(t *target, loose bool) bool {
	if len(t.argv) == 0 {
		return false
	}
	if matchArgv(m.tokens, t.argv) {
		return true
	}
	if !loose || strings.Contains(m.tokens[0], "/") {
		return false
	}
	// A deny on "curl *" also catches "/usr/bin/curl ..." and "./curl".
	base := path.Base(strings.ReplaceAll(t.argv[0], `\`, "/"))
	if base == t.argv[0] {
		return false
	}
	alt := append([]string{base}, t.argv[1:]...)
	return matchArgv(m.tokens, alt)
}

// matchArgv matches tokens against args; "**" spans any number of args.
// Backtracking is bounded by len(tokens)*len(args) through memoisation.
func matchArgv(tokens, args []string) bool {
	memo := make(map[[2]int]bool)
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var res bool
		switch {
		case i == len(tokens):
			res = j == len(args)
		case tokens[i] == "**":
			res = rec(i+1, j) || (j < len(args) && rec(i, j+1))
		case j < len(args) && matchToken(tokens[i], args[j]):
			res = rec(i+1, j+1)
		}
		memo[key] = res
		return res
	}
	return rec(0, 0)
}

// netMatcher is a host glob with an optional port glob.
type netMatcher struct{ host, port string }

func compileNet(p string) (matcher, error) {
	if strings.Contains(p, "://") || strings.ContainsAny(p, " \t/") {
		return nil, fmt.Errorf("%w: net pattern %q must be host[:port], no scheme or path", ErrInvalidRule, p)
	}
	host, port := splitHostPort(p)
	if host == "" {
		return nil, fmt.Errorf("%w: net pattern %q has no host", ErrInvalidRule, p)
	}
	if err := validateToken(host); err != nil {
		return nil, fmt.Errorf("%w: net pattern %q: %w", ErrInvalidRule, p, err)
	}
	if port != "" {
		if err := validateToken(port); err != nil {
			return nil, fmt.Errorf("%w: net pattern %q: %w", ErrInvalidRule, p, err)
		}
	}
	return netMatcher{host: strings.ToLower(host), port: port}, nil
}

func (m netMatcher) match(t *target, loose bool) bool {
	if t.host == "" || !matchToken(m.host, t.host) {
		return false
	}
	switch {
	case m.port == "":
		return true
	case t.port == "":
		return loose // unknown port: could be this one
	default:
		return matchToken(m.port, t.port)
	}
}

// splitHostPort splits "host", "host:port", "[v6]" and "[v6]:port"; a bare
// IPv6 address (several colons, no brackets) is all host.
func splitHostPort(s string) (host, port string) {
	if strings.HasPrefix(s, "[") {
		if h, p, err := net.SplitHostPort(s); err == nil {
			return h, p
		}
		return strings.Trim(s, "[]"), ""
	}
	if strings.Count(s, ":") == 1 {
		i := strings.IndexByte(s, ':')
		return s[:i], s[i+1:]
	}
	return s, ""
}
