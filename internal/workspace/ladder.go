package workspace

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The whitespace ladder: an edit's old text or a hunk's context is looked
// for exactly first, then with trailing whitespace (and "\r") ignored on
// every line, then with each line's indentation ignored too. A tolerant
// level is used only when it finds exactly one place; what is written
// there keeps the file's own line endings and indentation.

// Level is how loosely a line sequence matched.
type Level int

const (
	// Exact: byte for byte.
	Exact Level = iota
	// TrailingSpace: equal once trailing spaces, tabs and "\r" are dropped.
	TrailingSpace
	// Indentation: equal once leading and trailing whitespace are dropped.
	Indentation
)

// String says what a level ignored, for the model.
func (l Level) String() string {
	switch l {
	case TrailingSpace:
		return "ignoring trailing whitespace and \\r"
	case Indentation:
		return "ignoring indentation and trailing whitespace"
	}
	return "exactly"
}

// norm is a line (its ending included or not) as level compares it.
func norm(l Level, s string) string {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	switch l {
	case TrailingSpace:
		return strings.TrimRight(s, " \t\r")
	case Indentation:
		return strings.Trim(s, " \t\r")
	}
	return s
}

// seekLines returns every index ≥ from (at most limit of them; 0 for all)
// where pat's lines match lines at level.
func seekLines(lines, pat []string, from int, l Level, limit int) []int {
	if len(pat) == 0 {
		return nil
	}
	np := make([]string, len(pat))
	for i, p := range pat {
		np[i] = norm(l, p)
	}
	var at []int
	for i := max(from, 0); i+len(pat) <= len(lines); i++ {
		ok := true
		for j := range np {
			if norm(l, lines[i+j]) != np[j] {
				ok = false
				break
			}
		}
		if ok {
			at = append(at, i)
			if limit > 0 && len(at) >= limit {
				break
			}
		}
	}
	return at
}

// lineEnding is the ending of line ("\r\n", "\n" or "" at the end).
func lineEnding(line string) string {
	switch {
	case strings.HasSuffix(line, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(line, "\n"):
		return "\n"
	}
	return ""
}

// eolOf is the line ending the matched lines use: "\r\n" when every
// terminated one ends so, else "\n".
func eolOf(matched []string) string {
	crlf, n := 0, 0
	for _, l := range matched {
		switch lineEnding(l) {
		case "\r\n":
			crlf++
			n++
		case "\n":
			n++
		}
	}
	if n > 0 && crlf == n {
		return "\r\n"
	}
	return "\n"
}

func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// reindent maps the indentation the model wrote (in old) onto the file's
// (in the matched lines), learnt from the line pairs: the same, spaces
// for tabs (k spaces a tab), or a constant prefix added or dropped. ok is
// false when no one mapping fits every non-blank pair.
type reindent func(indent string) string

func learnIndent(matched, old []string) (reindent, bool) {
	type pair struct{ file, model string }
	var pairs []pair
	for i := range old {
		if strings.TrimSpace(old[i]) == "" {
			continue
		}
		pairs = append(pairs, pair{indentOf(matched[i]), indentOf(old[i])})
	}
	fits := func(f reindent) bool {
		for _, p := range pairs {
			if f(p.model) != p.file {
				return false
			}
		}
		return true
	}
	cands := []reindent{func(s string) string { return s }}
	for _, p := range pairs {
		tabs := strings.Count(p.file, "\t")
		sp := strings.Count(p.model, " ")
		if tabs > 0 && sp > 0 && sp%tabs == 0 && !strings.Contains(p.model, "\t") {
			cands = append(cands, spacesToTabs(sp/tabs))
		}
		if rest, ok := strings.CutSuffix(p.file, p.model); ok && rest != "" {
			add := rest
			cands = append(cands, func(s string) string { return add + s })
		}
		if rest, ok := strings.CutSuffix(p.model, p.file); ok && rest != "" {
			drop := rest
			cands = append(cands, func(s string) string { return strings.TrimPrefix(s, drop) })
		}
		if p.model == "" && p.file != "" {
			add := p.file
			cands = append(cands, func(s string) string { return add + spacesToTabs(4)(s) })
		}
	}
	for _, f := range cands {
		if fits(f) {
			return f, true
		}
	}
	return nil, false
}

// spacesToTabs turns each run of k leading spaces into a tab.
func spacesToTabs(k int) reindent {
	return func(s string) string {
		var b strings.Builder
		run := 0
		for _, r := range s {
			if r == ' ' {
				run++
				if run == k {
					b.WriteByte('\t')
					run = 0
				}
				continue
			}
			b.WriteString(strings.Repeat(" ", run))
			run = 0
			b.WriteRune(r)
		}
		b.WriteString(strings.Repeat(" ", run))
		return b.String()
	}
}

// adaptLine writes a line the model gave (without its ending) the way the
// file writes its lines: indentation mapped, ending eol.
func adaptLine(f reindent, line, eol string) string {
	ind := indentOf(line)
	return f(ind) + strings.TrimRight(line[len(ind):], "\r") + eol
}

// lineNumberPrefix is a copied read_file line number ("    12\t").
var lineNumberPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ *[0-9]+\t`) })

// StripLineNumbers removes read_file's line-number prefix from every line
// of s when every non-empty line carries one; ok reports that it did.
func StripLineNumbers(s string) (string, bool) {
	lines := strings.SplitAfter(s, "\n")
	seen := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if !lineNumberPrefix().MatchString(l) {
			return s, false
		}
		seen = true
	}
	if !seen {
		return s, false
	}
	for i, l := range lines {
		lines[i] = lineNumberPrefix().ReplaceAllString(l, "")
	}
	return strings.Join(lines, ""), true
}

// numbered renders lines[from:to] with 1-based numbers, read_file's way.
func numbered(lines []string, from, to int) string {
	var b strings.Builder
	for i := max(from, 0); i < min(to, len(lines)); i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, strings.TrimRight(lines[i], "\r\n"))
	}
	return b.String()
}

// closest finds the window of len(pat) lines most like pat (mean line
// similarity at least minSimilarity); ok false when none is. Windows are
// scored whole only where pat's first or last non-blank line resembles
// the file's line most (maxCandidates places each), so a long old text
// in a long file costs O(lines + candidates × len(pat)).
func closest(lines, pat []string) (at int, ok bool) {
	const (
		minSimilarity = 0.6
		maxCandidates = 20
	)
	np := make([]string, len(pat))
	var anchors []int // indexes into pat
	for j, p := range pat {
		np[j] = norm(Indentation, p)
		if np[j] != "" && (len(anchors) == 0 || j > anchors[len(anchors)-1]) {
			if len(anchors) < 2 {
				anchors = append(anchors, j)
			} else {
				anchors[1] = j
			}
		}
	}
	if len(pat) == 0 || len(pat) > len(lines) || len(anchors) == 0 {
		return 0, false
	}
	cand := map[int]bool{}
	for _, j := range anchors {
		type scored struct {
			at int
			s  float64
		}
		var top []scored
		for i := j; i+len(pat)-j <= len(lines); i++ {
			s := similarity(norm(Indentation, lines[i]), np[j])
			if s == 0 {
				continue
			}
			top = append(top, scored{i - j, s})
		}
		slices.SortStableFunc(top, func(a, b scored) int { return cmp.Compare(b.s, a.s) })
		for _, c := range top[:min(len(top), maxCandidates)] {
			cand[c.at] = true
		}
	}
	best, bestAt := 0.0, -1
	for i := range cand {
		sum := 0.0
		for j := range np {
			sum += similarity(norm(Indentation, lines[i+j]), np[j])
		}
		if s := sum / float64(len(np)); s > best || (s == best && i < bestAt) {
			best, bestAt = s, i
		}
	}
	if bestAt < 0 || best < minSimilarity {
		return 0, false
	}
	return bestAt, true
}

// similarity is the Dice coefficient of two strings' character bigrams
// (1 for equal strings).
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	grams := make(map[string]int, len(a))
	for i := 0; i+2 <= len(a); i++ {
		grams[a[i:i+2]]++
	}
	common := 0
	for i := 0; i+2 <= len(b); i++ {
		if grams[b[i:i+2]] > 0 {
			grams[b[i:i+2]]--
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b)-2)
}

// whyDiffers names a whitespace difference between the model's lines
// and the file's: tabs against spaces, CRLF endings, trailing spaces.
func whyDiffers(file, model []string) string {
	var why []string
	fileTabs, modelTabs, fileSpaces, modelSpaces := false, false, false, false
	crlf, modelCR, trailing := false, false, false
	for i := range model {
		fi, mi := indentOf(file[i]), indentOf(model[i])
		fileTabs = fileTabs || strings.Contains(fi, "\t")
		fileSpaces = fileSpaces || strings.Contains(fi, " ")
		modelTabs = modelTabs || strings.Contains(mi, "\t")
		modelSpaces = modelSpaces || strings.Contains(mi, " ")
		crlf = crlf || lineEnding(file[i]) == "\r\n"
		modelCR = modelCR || strings.HasSuffix(strings.TrimSuffix(model[i], "\n"), "\r")
		f, m := strings.TrimRight(file[i], "\r\n"), strings.TrimRight(model[i], "\r\n")
		trailing = trailing || (f != m && strings.TrimRight(f, " \t") == strings.TrimRight(m, " \t"))
	}
	if fileTabs && !modelTabs && modelSpaces {
		why = append(why, "the file indents with tabs, old with spaces")
	}
	if fileSpaces && !fileTabs && modelTabs {
		why = append(why, "the file indents with spaces, old with tabs")
	}
	if crlf && !modelCR {
		why = append(why, "the file ends its lines with CRLF (\\r\\n)")
	}
	if !crlf && modelCR {
		why = append(why, "old has CRLF (\\r\\n) endings, the file LF")
	}
	if trailing {
		why = append(why, "trailing whitespace differs")
	}
	return strings.Join(why, "; ")
}
