package tools

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// How read_file shows a file: numbered lines (cat -n), a window of at
// most readLines lines or readBytes bytes that ends at a line boundary and
// says how to go on, lines over maxLine bytes cut with a marker.
const (
	readLines = 400
	readBytes = 16 << 10
	maxLine   = 2000
)

// binaryProbe is how much of a file is checked for a NUL byte (grep's
// rule: such a file is binary).
const binaryProbe = 8 << 10

func isBinary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), binaryProbe)], 0) >= 0 }

// fileLines splits s into its lines without their "\n" (a final newline
// ends the last line; it does not start another).
func fileLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// numberLine renders one line read_file's way: its number, a tab, the
// text (a "\r" dropped), cut past maxLine bytes.
func numberLine(b *strings.Builder, n int, line string) {
	line = strings.TrimSuffix(line, "\r")
	fmt.Fprintf(b, "%6d\t", n)
	if len(line) <= maxLine {
		b.WriteString(line)
	} else {
		cut := maxLine
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		fmt.Fprintf(b, "%s … [line cut: %s of %s bytes shown; grep this file for the part you need]", line[:cut], thousands(cut), thousands(len(line)))
	}
	b.WriteByte('\n')
}

// NumberLines renders text with read_file's line numbers (cat -n, long
// lines cut): the form a context file takes in the prompt, so line
// numbers there match read_file's.
func NumberLines(text string) string {
	var b strings.Builder
	for i, l := range fileLines(text) {
		numberLine(&b, i+1, l)
	}
	return b.String()
}

// window renders the lines of data from 1-based offset: at most limit
// lines (0: readLines) and readBytes bytes, always at least one line,
// followed by where it stopped when it is not the whole file.
func window(path string, data []byte, offset, limit int) (string, error) {
	if isBinary(data) {
		return fmt.Sprintf("%s: binary file, %s bytes (not shown)", path, thousands(len(data))), nil
	}
	lines := fileLines(string(data))
	if offset < 1 {
		offset = 1
	}
	if len(lines) == 0 {
		if offset > 1 {
			return "", fmt.Errorf("read %s: offset %d is past the end: the file is empty", path, offset)
		}
		return fmt.Sprintf("%s: empty file (0 bytes)", path), nil
	}
	if offset > len(lines) {
		return "", fmt.Errorf("read %s: offset %d is past the end: the file has %s lines (the last is offset=%d)", path, offset, thousands(len(lines)), len(lines))
	}
	if limit <= 0 {
		limit = readLines
	}
	var b strings.Builder
	end := offset - 1
	for end < len(lines) && end-(offset-1) < limit {
		before := b.Len()
		numberLine(&b, end+1, lines[end])
		if b.Len() > readBytes && end > offset-1 {
			s := b.String()[:before]
			b.Reset()
			b.WriteString(s)
			break
		}
		end++
	}
	if offset == 1 && end == len(lines) {
		return b.String(), nil
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "[lines %d–%d of %s; continue with offset=%d]\n", offset, end, thousands(len(lines)), end+1)
	} else {
		fmt.Fprintf(&b, "[lines %d–%d of %s; end of file]\n", offset, end, thousands(len(lines)))
	}
	return b.String(), nil
}

// snippet renders lines [from, to) (1-based, clamped) of s numbered.
func snippet(s string, from, to int) string {
	lines := fileLines(s)
	var b strings.Builder
	for n := max(from, 1); n < to && n <= len(lines); n++ {
		numberLine(&b, n, lines[n-1])
	}
	return b.String()
}

// thousands writes n with comma separators (4,073).
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// cutAround shortens a long line to about width bytes centred on
// [lo, hi) (a match), saying how much was left out on each side.
func cutAround(line string, lo, hi, width int) string {
	if len(line) <= width {
		return line
	}
	hi = min(hi, lo+width) // a match as long as the line: its start
	pad := max((width-(hi-lo))/2, 20)
	start, end := max(lo-pad, 0), min(hi+pad, len(line))
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end++
	}
	s := line[start:end]
	if start > 0 {
		s = fmt.Sprintf("[… %s bytes] ", thousands(start)) + s
	}
	if end < len(line) {
		s += fmt.Sprintf(" [%s bytes …]", thousands(len(line)-end))
	}
	return s
}

// windowFooter is the last line of a partial read_file window (a file's
// own text never starts a line of a result: numbers do).
var windowFooter = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|\n)\[lines ([0-9,]+)–([0-9,]+) of ([0-9,]+); [^\n]*\]\n?$`)
})

// ReadWindow says which lines a read_file result shows (1-based, last
// included) and of how many: from its closing line when the window is
// partial, else from the numbered lines (the whole file). ok is false for
// a result that shows no numbered line (an error, a binary or empty file).
func ReadWindow(content string) (first, last, total int, ok bool) {
	atoi := func(s string) int { n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return n }
	if f := windowFooter().FindStringSubmatch(content); f != nil {
		return atoi(f[1]), atoi(f[2]), atoi(f[3]), true
	}
	lines := fileLines(content)
	if len(lines) == 0 {
		return 0, 0, 0, false
	}
	n1, ok1 := lineNumber(lines[0])
	n2, ok2 := lineNumber(lines[len(lines)-1])
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	return n1, n2, n2, true
}

// lineNumber is the number a numbered line starts with.
func lineNumber(l string) (int, bool) {
	num, _, ok := strings.Cut(l, "\t")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	return n, ok && err == nil
}
