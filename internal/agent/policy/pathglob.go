package policy

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// CheckPathGlob reports what is wrong with a workspace-relative ** glob (a
// read/write rule's pattern without its "!", an entry of a contract's
// scope.write, verify.protect or context), or nil. It is the one check
// both the contract's validation and the policy's rule compiler use. A
// glob must be relative (no alternative of it may start with "/"), have
// no ".." element (in any alternative), be valid doublestar syntax
// (balanced braces, closed classes) and have no inverted class range
// ([z-a] matches nothing). A leading "./" is allowed and ignored.
func CheckPathGlob(p string) error {
	p = strings.TrimPrefix(p, "./")
	switch {
	case strings.TrimSpace(p) == "":
		return errors.New("is empty")
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%q contains a NUL byte", p)
	case !utf8.ValidString(p):
		return fmt.Errorf("%q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q must be workspace-relative", p)
	}
	if !doublestar.ValidatePattern(p) {
		return fmt.Errorf("%q is not a valid glob (unbalanced braces, an unclosed [ or an empty [], or a trailing backslash)", p)
	}
	// Walk the glob as doublestar reads it: a backslash escapes the next
	// byte, a class runs to the first unescaped ']', and "{", "," and "}"
	// separate alternatives. Each atom between separators ("/" included)
	// is checked for "..", and what starts an alternative for "/".
	var atom strings.Builder
	endAtom := func() error {
		if atom.String() == ".." {
			return fmt.Errorf("%q must not contain \"..\"", p)
		}
		atom.Reset()
		return nil
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			i++
			atom.WriteByte(p[i])
		case '[':
			end, err := checkClass(p, i)
			if err != nil {
				return err
			}
			atom.WriteString(p[i : end+1])
			i = end
		case '{', ',', '}', '/':
			if err := endAtom(); err != nil {
				return err
			}
			if (c == '{' || c == ',') && i+1 < len(p) && p[i+1] == '/' {
				return fmt.Errorf("%q must be workspace-relative (an alternative starts with \"/\")", p)
			}
		default:
			atom.WriteByte(c)
		}
	}
	return endAtom()
}

// checkClass returns the index of the ']' closing the class opened at
// p[i] and rejects an inverted range in it.
func checkClass(p string, i int) (int, error) {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	var runes []rune
	for ; j < len(p) && !(p[j] == ']' && len(runes) > 0); j++ {
		if p[j] == '\\' && j+1 < len(p) {
			j++
		}
		r, size := utf8.DecodeRuneInString(p[j:])
		runes = append(runes, r)
		j += size - 1
	}
	if j >= len(p) {
		return 0, fmt.Errorf("%q is not a valid glob (an unclosed [)", p)
	}
	// The class's runes as read: a run "x-y" (the '-' not last) is a range.
	for k := 0; k+2 < len(runes); k++ {
		if runes[k+1] == '-' {
			if runes[k] > runes[k+2] {
				return 0, fmt.Errorf("%q has the inverted range %c-%c, which matches nothing", p, runes[k], runes[k+2])
			}
			k += 2
		}
	}
	return j, nil
}

// escapeAlternative returns a valid glob g written so that, put between
// "{" and "}" with others, it stays one alternative meaning what g alone
// means: a "," or "}" outside g's own braces and classes is escaped (alone
// they are literal characters; inside an alternation they would end it).
func escapeAlternative(g string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '\\' && i+1 < len(g):
			b.WriteString(g[i : i+2])
			i++
			continue
		case c == '[':
			if end, err := checkClass(g, i); err == nil {
				b.WriteString(g[i : end+1])
				i = end
				continue
			}
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case (c == ',' || c == '}') && depth == 0:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
