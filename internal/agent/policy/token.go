package policy

import (
	"errors"
	"unicode/utf8"
)

// Token globs match one argv element, a host or a port. Syntax: * matches
// any run of characters (including "/" and "."), ? one character, [abc],
// [a-z] and [!a-z] (or [^a-z]) one character of a class, and \x the
// character x literally.

var (
	errUnclosedClass = errors.New("unclosed [ in glob")
	errTrailingSlash = errors.New("glob ends in a lone backslash")
	errEmptyClass    = errors.New("empty [] in glob")
)

// validateToken reports a syntax error in a token glob.
func validateToken(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 >= len(p) {
				return errTrailingSlash
			}
			i++
		case '[':
			end, err := classEnd(p, i)
			if err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// classEnd returns the index of the ']' closing the class opened at p[i].
func classEnd(p string, i int) (int, error) {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	start := j
	for ; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case ']':
			if j == start {
				return 0, errEmptyClass
			}
			return j, nil
		}
	}
	return 0, errUnclosedClass
}

// matchToken reports whether s matches the token glob p. An invalid p
// matches nothing. It runs in O(len(p)*len(s)) with one star backtrack
// point, the classic wildcard algorithm; like path.Match it steps bytes
// for * and literals and runes for ? and classes.
func matchToken(p, s string) bool {
	if validateToken(p) != nil {
		return false
	}
	pi, si := 0, 0
	starP, starS := -1, 0
	for {
		if pi < len(p) && p[pi] == '*' {
			starP, starS = pi, si
			pi++
			continue
		}
		if pi == len(p) && si == len(s) {
			return true
		}
		if pi < len(p) && si < len(s) {
			if n, pw, ok := matchOne(p, pi, s, si); ok {
				pi += pw
				si += n
				continue
			}
		}
		if starP < 0 || starS >= len(s) {
			return false
		}
		// Let the last star swallow one more byte and retry after it.
		starS++
		si = starS
		pi = starP + 1
	}
}

// matchOne matches the single-character element of p at pi against the
// rune at s[si]; it returns the rune's width, the element's width and
// whether it matched.
func matchOne(p string, pi int, s string, si int) (int, int, bool) {
	r, n := utf8.DecodeRuneInString(s[si:])
	switch p[pi] {
	case '?':
		return n, 1, true
	case '[':
		end, err := classEnd(p, pi)
		if err != nil {
			return n, 0, false
		}
		return n, end - pi + 1, inClass(p[pi+1:end], r)
	case '\\':
		return 1, 2, p[pi+1] == s[si]
	default:
		// Literals compare byte by byte (a multi-byte rune is a run of
		// literal bytes), so bytes that are not UTF-8 match only themselves.
		return 1, 1, p[pi] == s[si]
	}
}

// inClass reports whether r is in the class body (between [ and ]).
func inClass(body string, r rune) bool {
	negate := false
	if body != "" && (body[0] == '!' || body[0] == '^') {
		negate, body = true, body[1:]
	}
	found := false
	for i := 0; i < len(body); {
		lo, w := classRune(body, i)
		i += w
		hi := lo
		if i+1 < len(body) && body[i] == '-' {
			hi, w = classRune(body, i+1)
			i += 1 + w
		}
		if lo <= r && r <= hi {
			found = true
		}
	}
	return found != negate
}

func classRune(body string, i int) (rune, int) {
	if body[i] == '\\' && i+1 < len(body) {
		r, w := utf8.DecodeRuneInString(body[i+1:])
		return r, 1 + w
	}
	return utf8.DecodeRuneInString(body[i:])
}
