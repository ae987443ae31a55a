package workspace

import (
	"bytes"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// prefilter finds candidate positions cheaply: every match of the regex
// contains the prefilter's literal, so a file or line without it is
// rejected without running the regex.
type prefilter struct {
	lit  []byte // lower-cased when fold
	fold bool   // ASCII case-insensitive
	// anchor is the index in lit of the byte searched with IndexByte (both
	// cases lo and up when fold), chosen as the rarest.
	anchor int
	lo, up byte
}

// literalOf extracts a literal every match of re must contain, and whether
// it is case-folded. exact reports that re is that literal and nothing
// else, so a prefilter hit is a match.
func literalOf(re *syntax.Regexp) (lit string, fold, exact bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0, true
	case syntax.OpCapture:
		return literalOf(re.Sub[0])
	case syntax.OpPlus:
		l, f, _ := literalOf(re.Sub[0])
		return l, f, false
	case syntax.OpRepeat:
		if re.Min >= 1 {
			l, f, _ := literalOf(re.Sub[0])
			return l, f, false
		}
	case syntax.OpConcat:
		var best string
		var bestFold bool
		bestScore := 0.0
		consider := func(l string, f bool) {
			if sc := literalScore(l, f); sc > bestScore {
				best, bestFold, bestScore = l, f, sc
			}
		}
		for _, s := range re.Sub {
			l, f, _ := literalOf(s)
			consider(l, f)
		}
		return best, bestFold, false
	}
	return "", false, false
}

// newPrefilter builds the prefilter of a parsed pattern; nil when the
// pattern has no usable literal. exact reports that a prefilter hit is a
// match of the whole pattern.
func newPrefilter(re *syntax.Regexp) (p *prefilter, exact bool) {
	lit, fold, exact := literalOf(re)
	if fold {
		seg := asciiFoldSegment(lit)
		exact = exact && seg == lit
		lit = seg
	}
	// Grep is line-oriented: a literal spanning lines cannot be in a line.
	if strings.Contains(lit, "\n") {
		return nil, false
	}
	if lit == "" {
		return nil, false
	}
	p = &prefilter{lit: []byte(lit), fold: fold}
	if fold {
		p.lit = bytes.ToLower(p.lit)
	}
	// Search for the rarest byte of the literal with IndexByte (SIMD) and
	// verify around it: far fewer false starts than on the first byte.
	best := 0
	for i, c := range p.lit {
		if byteRank(c) < byteRank(p.lit[best]) {
			best = i
		}
	}
	p.anchor = best
	p.lo, p.up = p.lit[best], p.lit[best]
	if fold && 'a' <= p.lo && p.lo <= 'z' {
		p.up = p.lo - 'a' + 'A'
	}
	return p, exact
}

// literalScore estimates how selective a literal is as a prefilter, in
// bits: the sum over its usable bytes of how rare each byte is in source
// text. A longer literal of rare bytes rejects more lines.
func literalScore(lit string, fold bool) float64 {
	if fold {
		lit = strings.ToLower(asciiFoldSegment(lit))
	}
	if strings.Contains(lit, "\n") {
		return 0
	}
	var bits float64
	for i := 0; i < len(lit); i++ {
		r := byteRank(lit[i])
		switch {
		case r == 0:
			bits += 9
		case r < 10:
			bits += 6
		default:
			bits += 7 - 5*float64(r-10)/27
		}
	}
	return bits
}

// asciiFoldSegment returns the longest run of lit made of ASCII runes
// whose case-fold orbit is ASCII too ("k" is not: it folds to the Kelvin
// sign). On that run, ASCII case folding is exact.
func asciiFoldSegment(lit string) string {
	best, start := "", 0
	for i := 0; i <= len(lit); {
		r, size := utf8.RuneError, 1
		if i < len(lit) {
			r, size = utf8.DecodeRuneInString(lit[i:])
		}
		if i == len(lit) || !asciiOrbit(r) {
			if i-start > len(best) {
				best = lit[start:i]
			}
			start = i + size
		}
		i += size
	}
	return best
}

func asciiOrbit(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// byteRank orders bytes from rare to common in source text (lower is
// rarer); used to pick the byte searched with IndexByte.
func byteRank(c byte) int {
	const common = "zqjxkvbywgpfmu_cdhlrsnioat e"
	if i := strings.IndexByte(common, c); i >= 0 {
		return 10 + i
	}
	switch c {
	case '\t', '.', ',', '(', ')', ';', '"', '/', '*', '=':
		return 5
	}
	return 0
}

// foldState caches where the anchor's two cases occur next, so a scan of
// one buffer stays linear (one state per buffer).
type foldState struct{ lo, up int }

func newFoldState() foldState { return foldState{lo: -2, up: -2} }

// index returns the first position at or after from where the literal
// starts, or -1.
func (p *prefilter) index(b []byte, from int, st *foldState) int {
	n := len(p.lit)
	for search := from + p.anchor; ; {
		a := p.nextAnchor(b, search, st)
		if a < 0 {
			return -1
		}
		s := a - p.anchor
		if s >= from && s+n <= len(b) && p.equal(b[s:s+n]) {
			return s
		}
		search = a + 1
	}
}

// nextAnchor returns the first position >= from holding either case of the
// anchor byte, or -1.
func (p *prefilter) nextAnchor(b []byte, from int, st *foldState) int {
	if from >= len(b) {
		return -1
	}
	next := func(cached *int, c byte) int {
		if *cached == -1 || (*cached >= from) {
			return *cached
		}
		i := bytes.IndexByte(b[from:], c)
		if i >= 0 {
			i += from
		}
		*cached = i
		return i
	}
	l := next(&st.lo, p.lo)
	if p.up == p.lo {
		return l
	}
	u := next(&st.up, p.up)
	switch {
	case l < 0:
		return u
	case u < 0:
		return l
	case l < u:
		return l
	}
	return u
}

// equal compares a candidate with the literal.
func (p *prefilter) equal(s []byte) bool {
	if !p.fold {
		return bytes.Equal(s, p.lit)
	}
	return foldEqual(s, p.lit)
}

// foldEqual compares s with the lower-case lit under ASCII case folding.
func foldEqual(s, lit []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	return true
}
