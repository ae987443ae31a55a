package workspace

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// A trigram is three consecutive bytes of a file packed into the low 24
// bits. A case-insensitive literal asks for any case variant of each of
// its trigrams.
type trigram = uint32

func packTrigram(a, b, c byte) trigram {
	return trigram(a)<<16 | trigram(b)<<8 | trigram(c)
}

// caseVariants returns the trigrams equal to t under ASCII case folding
// (t itself included; up to 8).
func caseVariants(t trigram) []trigram {
	out := []trigram{t}
	for shift := 0; shift < 24; shift += 8 {
		c := byte(t >> shift)
		var o byte
		switch {
		case 'a' <= c && c <= 'z':
			o = c - 'a' + 'A'
		case 'A' <= c && c <= 'Z':
			o = c - 'A' + 'a'
		default:
			continue
		}
		for _, v := range out {
			out = append(out, v&^(0xff<<shift)|trigram(o)<<shift)
		}
	}
	return out
}

// Query operators: a file is a candidate when the query holds for the
// set of its trigrams.
const (
	qAll = iota // every file (nothing is known)
	qTri        // files holding tri
	qAnd        // files satisfying every sub-query
	qOr         // files satisfying some sub-query
)

// tquery is a necessary condition for a line of a file to match a
// pattern, in terms of the file's trigrams.
type tquery struct {
	op   int
	tri  trigram
	subs []*tquery
}

var queryAll = &tquery{op: qAll}

// trigramQuery derives from a parsed pattern a condition every file with
// a matching line satisfies. It only ever weakens: parts it cannot reason
// about become qAll, which keeps every file.
func trigramQuery(re *syntax.Regexp) *tquery {
	switch re.Op {
	case syntax.OpLiteral:
		return literalQuery(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCapture:
		return trigramQuery(re.Sub[0])
	case syntax.OpPlus:
		return trigramQuery(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return trigramQuery(re.Sub[0])
		}
	case syntax.OpConcat:
		var subs []*tquery
		for _, s := range re.Sub {
			subs = append(subs, trigramQuery(s))
		}
		return and(subs)
	case syntax.OpAlternate:
		var subs []*tquery
		for _, s := range re.Sub {
			q := trigramQuery(s)
			if q.op == qAll {
				return queryAll
			}
			subs = append(subs, q)
		}
		if len(subs) == 1 {
			return subs[0]
		}
		return &tquery{op: qOr, subs: subs}
	}
	return queryAll
}

func and(subs []*tquery) *tquery {
	var keep []*tquery
	for _, q := range subs {
		switch q.op {
		case qAll:
		case qAnd:
			keep = append(keep, q.subs...)
		default:
			keep = append(keep, q)
		}
	}
	switch len(keep) {
	case 0:
		return queryAll
	case 1:
		return keep[0]
	}
	return &tquery{op: qAnd, subs: keep}
}

// literalQuery requires the trigrams of a literal's usable runs: all of
// it when matched exactly (a newline ends a run: grep matches within a
// line); under case folding only runs of runes whose fold orbit is ASCII
// ("k" is not: it also matches the Kelvin sign), each trigram in any of
// its case variants.
func literalQuery(runes []rune, fold bool) *tquery {
	var subs []*tquery
	var run []byte
	flush := func() {
		for i := 0; i+3 <= len(run); i++ {
			t := packTrigram(run[i], run[i+1], run[i+2])
			if !fold {
				subs = append(subs, &tquery{op: qTri, tri: t})
				continue
			}
			var or []*tquery
			for _, v := range caseVariants(t) {
				or = append(or, &tquery{op: qTri, tri: v})
			}
			if len(or) == 1 {
				subs = append(subs, or[0])
			} else {
				subs = append(subs, &tquery{op: qOr, subs: or, tri: t})
			}
		}
		run = run[:0]
	}
	for _, r := range runes {
		// U+FFFD also matches an invalid byte of the file, which has other
		// bytes: it ends a run too.
		if r == '\n' || r == utf8.RuneError || (fold && !asciiOrbit(r)) {
			flush()
			continue
		}
		run = utf8.AppendRune(run, r)
	}
	flush()
	slices.SortFunc(subs, func(a, b *tquery) int { return int(a.tri) - int(b.tri) })
	subs = slices.CompactFunc(subs, func(a, b *tquery) bool { return a.tri == b.tri })
	return and(subs)
}

// fileSet is a sorted set of file ids, or every file when all is set.
type fileSet struct {
	all bool
	ids []uint32
}

// eval evaluates q against one segment's postings; a posting list that
// cannot be read counts as every file.
func (q *tquery) eval(post func(trigram) ([]uint32, error)) fileSet {
	switch q.op {
	case qTri:
		ids, err := post(q.tri)
		if err != nil {
			return fileSet{all: true}
		}
		return fileSet{ids: ids}
	case qAnd:
		res := fileSet{all: true}
		for _, s := range q.subs {
			res = intersect(res, s.eval(post))
			if !res.all && len(res.ids) == 0 {
				break
			}
		}
		return res
	case qOr:
		var res fileSet
		for _, s := range q.subs {
			res = union(res, s.eval(post))
			if res.all {
				break
			}
		}
		return res
	}
	return fileSet{all: true}
}

func intersect(a, b fileSet) fileSet {
	switch {
	case a.all:
		return b
	case b.all:
		return a
	}
	out := make([]uint32, 0, min(len(a.ids), len(b.ids)))
	for i, j := 0, 0; i < len(a.ids) && j < len(b.ids); {
		switch {
		case a.ids[i] < b.ids[j]:
			i++
		case a.ids[i] > b.ids[j]:
			j++
		default:
			out = append(out, a.ids[i])
			i++
			j++
		}
	}
	return fileSet{ids: out}
}

func union(a, b fileSet) fileSet {
	if a.all || b.all {
		return fileSet{all: true}
	}
	out := make([]uint32, 0, len(a.ids)+len(b.ids))
	i, j := 0, 0
	for i < len(a.ids) && j < len(b.ids) {
		switch {
		case a.ids[i] < b.ids[j]:
			out = append(out, a.ids[i])
			i++
		case a.ids[i] > b.ids[j]:
			out = append(out, b.ids[j])
			j++
		default:
			out = append(out, a.ids[i])
			i++
			j++
		}
	}
	out = append(out, a.ids[i:]...)
	return fileSet{ids: append(out, b.ids[j:]...)}
}
