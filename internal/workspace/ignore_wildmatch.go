package workspace

import "strings"

// Results of wildmatch's recursive step, as in git's wildmatch.c: the two
// abort values let a failed "*" tell the "*"/"**" levels above it that
// trying further text positions cannot help.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch reports whether text matches the gitignore glob pat under
// git's rules (wildmatch with WM_PATHNAME when pathname is set): "*", "?"
// and classes do not match "/"; "**" matches across directories only when
// it stands between slashes or at an end of the pattern ("**/", "/**",
// "/**/"), and is a plain "*" elsewhere; "\" escapes the next byte; classes
// take ranges, "!" or "^" negation and the POSIX [:name:] classes.
func wildmatch(pat, text string, pathname bool) bool {
	return dowild(pat, 0, text, pathname) == wmMatch
}

func dowild(pat string, p int, text string, pathname bool) int {
	start := p
	t := 0
	for ; p < len(pat); p, t = p+1, t+1 {
		pc := pat[p]
		if t >= len(text) && pc != '*' {
			return wmAbortAll
		}
		var tc byte
		if t < len(text) {
			tc = text[t]
		}
		switch pc {
		case '*':
			// Handled below.
		case '\\':
			p++
			if p >= len(pat) || tc != pat[p] {
				return wmNoMatch
			}
			continue
		case '?':
			if pathname && tc == '/' {
				return wmNoMatch
			}
			continue
		case '[':
			r, np := matchClass(pat, p, tc)
			if r != wmMatch {
				return r
			}
			if pathname && tc == '/' {
				return wmNoMatch
			}
			p = np
			continue
		default:
			if tc != pc {
				return wmNoMatch
			}
			continue
		}
		// A run of asterisks.
		matchSlash := !pathname
		p++
		if p < len(pat) && pat[p] == '*' {
			prev := p - 2
			for p < len(pat) && pat[p] == '*' {
				p++
			}
			if (prev < start || pat[prev] == '/') &&
				(p == len(pat) || pat[p] == '/' || (pat[p] == '\\' && p+1 < len(pat) && pat[p+1] == '/')) {
				if p < len(pat) && pat[p] == '/' && dowild(pat, p+1, text[t:], pathname) == wmMatch {
					return wmMatch
				}
				matchSlash = true
			} else {
				matchSlash = false
			}
		}
		if p == len(pat) {
			// A trailing "**" matches everything, a trailing "*" only
			// what has no more slashes.
			if !matchSlash && strings.IndexByte(text[t:], '/') >= 0 {
				return wmNoMatch
			}
			return wmMatch
		}
		if !matchSlash && pat[p] == '/' {
			// One asterisk before a slash matches the rest of this
			// directory name.
			i := strings.IndexByte(text[t:], '/')
			if i < 0 {
				return wmNoMatch
			}
			t += i
			// The loop's increment consumes both slashes.
			continue
		}
		for {
			if t >= len(text) {
				break
			}
			// Skip ahead to the next occurrence of a literal that
			// follows the asterisk.
			if c := pat[p]; !isGlobSpecial(c) {
				for t < len(text) && (matchSlash || text[t] != '/') && text[t] != c {
					t++
				}
				if t >= len(text) || text[t] != c {
					if matchSlash {
						return wmAbortAll
					}
					return wmAbortToStarStar
				}
			}
			m := dowild(pat, p, text[t:], pathname)
			if m != wmNoMatch {
				if !matchSlash || m != wmAbortToStarStar {
					return m
				}
			} else if !matchSlash && text[t] == '/' {
				return wmAbortToStarStar
			}
			t++
		}
		return wmAbortAll
	}
	if t < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// matchClass matches tc against the bracket expression opening at
// pat[open]; it returns wmMatch and the index of the closing "]" when tc is
// in the class, wmNoMatch when it is not, and wmAbortAll for an unclosed
// or malformed class (which then matches nothing, as in git).
func matchClass(pat string, open int, tc byte) (int, int) {
	p := open + 1
	at := func(i int) byte {
		if i < len(pat) {
			return pat[i]
		}
		return 0
	}
	pc := at(p)
	if pc == '^' {
		pc = '!'
	}
	negated := pc == '!'
	if negated {
		p++
		pc = at(p)
	}
	var prev byte
	matched := false
	for {
		if pc == 0 {
			return wmAbortAll, 0
		}
		switch {
		case pc == '\\':
			p++
			pc = at(p)
			if pc == 0 {
				return wmAbortAll, 0
			}
			if tc == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && at(p+1) != 0 && at(p+1) != ']':
			p++
			pc = at(p)
			if pc == '\\' {
				p++
				pc = at(p)
				if pc == 0 {
					return wmAbortAll, 0
				}
			}
			if tc <= pc && tc >= prev {
				matched = true
			}
			pc = 0 // a range does not start another one
		case pc == '[' && at(p+1) == ':':
			s := p + 2
			q := s
			for q < len(pat) && pat[q] != ']' {
				q++
			}
			if q >= len(pat) {
				return wmAbortAll, 0
			}
			if q-s-1 < 0 || pat[q-1] != ':' {
				// No ":]": a plain "[" in the set.
				if tc == '[' {
					matched = true
				}
				pc = '['
				break
			}
			p = q
			ok, valid := posixClass(pat[s:q-1], tc)
			if !valid {
				return wmAbortAll, 0
			}
			if ok {
				matched = true
			}
			pc = 0
		default:
			if tc == pc {
				matched = true
			}
		}
		prev = pc
		p++
		pc = at(p)
		if pc == ']' {
			break
		}
	}
	if matched == negated {
		return wmNoMatch, 0
	}
	return wmMatch, p
}

// posixClass reports whether c is in the named POSIX class ([:alpha:]
// and friends, ASCII only as in git) and whether the name is known.
func posixClass(name string, c byte) (in, known bool) {
	isUpper := 'A' <= c && c <= 'Z'
	isLower := 'a' <= c && c <= 'z'
	isDigit := '0' <= c && c <= '9'
	isAlpha := isUpper || isLower
	isPrint := c >= 0x20 && c < 0x7f
	isSpace := c == ' ' || ('\t' <= c && c <= '\r')
	switch name {
	case "alnum":
		return isAlpha || isDigit, true
	case "alpha":
		return isAlpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return isPrint && c != ' ', true
	case "lower":
		return isLower, true
	case "print":
		return isPrint, true
	case "punct":
		return isPrint && c != ' ' && !isAlpha && !isDigit, true
	case "space":
		return isSpace, true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F'), true
	}
	return false, false
}
