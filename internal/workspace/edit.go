package workspace

import (
	"fmt"
	"strings"
)

// Edited is what an Edit did.
type Edited struct {
	Count int   // replacements made
	Line  int   // 1-based first line of the first replacement
	Lines int   // lines the first replacement's new text spans
	Level Level // how old matched (Exact, or a tolerant level)
	// Unnumbered: old carried read_file's line-number prefixes, which
	// were dropped before matching.
	Unnumbered bool
}

// maxListed caps the occurrences an ambiguity error lists.
const maxListed = 10

// editText replaces old with new in data: the exact text, or else the
// one place the whitespace ladder finds.
func editText(path string, data []byte, old, new string, replaceAll bool) ([]byte, Edited, error) {
	s := string(data)
	if n := strings.Count(s, old); n == 1 || (n > 1 && replaceAll) {
		i := strings.Index(s, old)
		return []byte(strings.ReplaceAll(s, old, new)), Edited{Count: n, Line: 1 + strings.Count(s[:i], "\n"), Lines: countLines(new)}, nil
	} else if n > 1 {
		return nil, Edited{}, ambiguous(path, splitLines(data), exactStarts(s, old), n, Exact)
	}
	if o, ok := StripLineNumbers(old); ok {
		if nw, ok := StripLineNumbers(new); ok {
			new = nw
		}
		out, e, err := editText(path, data, o, new, replaceAll)
		e.Unnumbered = true
		return out, e, err
	}
	lines := splitLines(data)
	oldEndsNL := strings.HasSuffix(old, "\n")
	ol := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	if strings.TrimSpace(old) != "" {
		for _, l := range []Level{TrailingSpace, Indentation} {
			at := seekLines(lines, ol, 0, l, maxListed+1)
			switch {
			case len(at) == 1:
				return replaceAt(path, lines, at[0], ol, oldEndsNL, new, l)
			case len(at) > 1:
				total := len(at)
				if total > maxListed {
					total = -1
				}
				return nil, Edited{}, ambiguous(path, lines, at, total, l)
			}
		}
	}
	return nil, Edited{}, &MatchError{Path: path, Err: ErrNoMatch, Detail: nearest(lines, ol)}
}

// replaceAt writes new over the len(ol) lines at i, which matched old at
// level l: lines new shares with old keep the file's text, the others
// take the file's indentation and line ending.
func replaceAt(path string, lines []string, i int, ol []string, oldEndsNL bool, new string, l Level) ([]byte, Edited, error) {
	matched := lines[i : i+len(ol)]
	f, ok := learnIndent(matched, ol)
	if !ok {
		return nil, Edited{}, &MatchError{Path: path, Err: ErrNoMatch, Detail: fmt.Sprintf(
			"old matches lines %d–%d only %s, and its indentation does not map onto the file's line by line; copy the lines as read_file shows them:\n%s",
			i+1, i+len(ol), l, numbered(lines, i, i+len(ol)))}
	}
	eol := eolOf(matched)
	var nl []string
	newEndsNL := strings.HasSuffix(new, "\n")
	if new != "" {
		nl = strings.Split(strings.TrimSuffix(new, "\n"), "\n")
	}
	var b strings.Builder
	for _, l := range lines[:i] {
		b.WriteString(l)
	}
	p := 0
	for k, n := range nl {
		if k > 0 {
			b.WriteString(eol)
		}
		j := p
		for j < len(ol) && ol[j] != n {
			j++
		}
		if j < len(ol) {
			b.WriteString(strings.TrimRight(matched[j], "\r\n"))
			p = j + 1
			continue
		}
		b.WriteString(adaptLine(f, n, ""))
	}
	last := lineEnding(matched[len(matched)-1])
	switch {
	case oldEndsNL && newEndsNL:
		b.WriteString(last)
	case !oldEndsNL:
		if newEndsNL {
			b.WriteString(eol)
		}
		b.WriteString(last)
	}
	for _, l := range lines[i+len(ol):] {
		b.WriteString(l)
	}
	return []byte(b.String()), Edited{Count: 1, Line: i + 1, Lines: len(nl), Level: l}, nil
}

// exactStarts returns the 0-based line of each occurrence of old in s.
func exactStarts(s, old string) []int {
	var at []int
	line, from := 0, 0
	for len(at) <= maxListed {
		i := strings.Index(s[from:], old)
		if i < 0 {
			break
		}
		line += strings.Count(s[from:from+i], "\n")
		at = append(at, line)
		from += i + len(old)
		line += strings.Count(old, "\n")
	}
	return at
}

// ambiguous lists where old occurs, each place with the line before it,
// so one more call can make old unique; total -1 is "more than listed".
func ambiguous(path string, lines []string, at []int, total int, l Level) error {
	var b strings.Builder
	how := ""
	if l != Exact {
		how = " (" + l.String() + ")"
	}
	nums := make([]string, 0, len(at))
	for _, a := range at[:min(len(at), maxListed)] {
		nums = append(nums, fmt.Sprint(a+1))
	}
	count, more := fmt.Sprint(total), ""
	if total < 0 {
		count = fmt.Sprintf("more than %d", maxListed)
	}
	if len(at) > maxListed {
		more = ", …"
	}
	fmt.Fprintf(&b, "old occurs %s times%s, at lines %s%s; add a neighbouring line to old to make it unique, or set replace_all:",
		count, how, strings.Join(nums, ", "), more)
	for _, a := range at[:min(len(at), maxListed)] {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(numbered(lines, a-1, a+1), "\n"))
		b.WriteString("\n--")
	}
	return &MatchError{Path: path, Count: max(total, len(at)), Lines: at, Err: ErrAmbiguous, Detail: b.String()}
}

// nearest describes the lines most like old, or says there are none.
func nearest(lines, ol []string) string {
	at, ok := closest(lines, ol)
	if !ok {
		return fmt.Sprintf("no %d-line window of the file (%d lines) resembles old; read_file it and copy the text (without the line numbers)", len(ol), len(lines))
	}
	s := fmt.Sprintf("the closest lines are %d–%d:\n%s", at+1, at+len(ol), numbered(lines, at, at+len(ol)))
	if why := whyDiffers(lines[at:at+len(ol)], ol); why != "" {
		s += "difference: " + why + "\n"
	}
	return strings.TrimRight(s, "\n")
}

// countLines is how many lines s spans (a final newline ends the last).
func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}
