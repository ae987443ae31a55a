package workspace

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
)

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

// maxEditDistance bounds the Myers search (its saved frontiers take
// O(D²) memory: 8 MiB at this bound); past it the middle of the file is
// reported as replaced wholesale (still a correct, applyable diff).
const maxEditDistance = 1024

// splitLines splits data into lines that keep their "\n"; the last line
// may lack it.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := make([]string, 0, bytes.Count(data, []byte{'\n'})+1)
	s := string(data)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// editKind is one step of an edit script.
type editKind byte

const (
	editEqual editKind = iota
	editDelete
	editInsert
)

// lineEdit is one step: a line kept, deleted from a, or inserted from b.
type lineEdit struct {
	kind editKind
	a, b int // indexes into a and b (the one that applies)
}

// diffLines computes a shortest edit script from a to b with Myers'
// O(ND) algorithm after trimming the common prefix and suffix.
func diffLines(a, b []string) []lineEdit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []lineEdit
	for i := 0; i < pre; i++ {
		out = append(out, lineEdit{editEqual, i, i})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		out = append(out, lineEdit{editEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return out
}

// myers returns the edit script of a and b, offsetting indexes by ao, bo.
func myers(a, b []string, ao, bo int) []lineEdit {
	n, m := len(a), len(b)
	max := n + m
	if max == 0 {
		return nil
	}
	wholesale := func() []lineEdit {
		out := make([]lineEdit, 0, n+m)
		for i := range n {
			out = append(out, lineEdit{editDelete, ao + i, 0})
		}
		for j := range m {
			out = append(out, lineEdit{editInsert, 0, bo + j})
		}
		return out
	}
	off := max
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		if d > maxEditDistance {
			return wholesale()
		}
		// Save the frontier of the previous round: diagonals -d..d.
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d, ao, bo)
			}
		}
	}
	return wholesale()
}

// backtrack walks the saved frontiers back from (n, m) to (0, 0).
func backtrack(trace [][]int, a, b []string, d, ao, bo int) []lineEdit {
	x, y := len(a), len(b)
	var rev []lineEdit
	for ; d > 0; d-- {
		// trace[d] holds diagonals -d..d of the frontier before round d,
		// shifted so diagonal k is at index k+d.
		v := trace[d]
		at := func(k int) int { return v[k+d] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, lineEdit{editEqual, ao + x, bo + y})
		}
		if x == px {
			y--
			rev = append(rev, lineEdit{editInsert, 0, bo + y})
		} else {
			x--
			rev = append(rev, lineEdit{editDelete, ao + x, 0})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, lineEdit{editEqual, ao + x, bo + y})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// writeLine writes one diff line with its prefix, marking a missing final
// newline the way diff(1) does.
func writeLine(sb *strings.Builder, prefix byte, line string) {
	sb.WriteByte(prefix)
	sb.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		sb.WriteString("\n\\ No newline at end of file\n")
	}
}

// unifiedHunks renders the hunks of a → b (without file headers).
func unifiedHunks(sb *strings.Builder, a, b []string) {
	edits := diffLines(a, b)
	for i := 0; i < len(edits); {
		for i < len(edits) && edits[i].kind == editEqual {
			i++
		}
		if i == len(edits) {
			break
		}
		start := max(i-diffContext, 0)
		// Extend the hunk while changes are closer than 2*context lines.
		end := i
		for j := i; j < len(edits); {
			if edits[j].kind != editEqual {
				end = j + 1
				j++
				continue
			}
			run := j
			for run < len(edits) && edits[run].kind == editEqual {
				run++
			}
			if run == len(edits) || run-j > 2*diffContext {
				break
			}
			j = run
		}
		stop := min(end+diffContext, len(edits))
		hunk := edits[start:stop]
		aStart, bStart, aLen, bLen := hunkRange(hunk, edits, start)
		fmt.Fprintf(sb, "@@ -%s +%s @@\n", rangeStr(aStart, aLen), rangeStr(bStart, bLen))
		for _, e := range hunk {
			switch e.kind {
			case editEqual:
				writeLine(sb, ' ', a[e.a])
			case editDelete:
				writeLine(sb, '-', a[e.a])
			case editInsert:
				writeLine(sb, '+', b[e.b])
			}
		}
		i = stop
	}
}

// hunkRange computes the 1-based start lines and lengths of a hunk.
func hunkRange(hunk, all []lineEdit, start int) (aStart, bStart, aLen, bLen int) {
	// Lines of a and b consumed before the hunk.
	for _, e := range all[:start] {
		if e.kind != editInsert {
			aStart++
		}
		if e.kind != editDelete {
			bStart++
		}
	}
	for _, e := range hunk {
		if e.kind != editInsert {
			aLen++
		}
		if e.kind != editDelete {
			bLen++
		}
	}
	if aLen > 0 {
		aStart++
	}
	if bLen > 0 {
		bStart++
	}
	return
}

func rangeStr(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// fileDiff renders a git-style unified diff of one file; "" when equal.
// A nil side (exists false) is /dev/null.
func fileDiff(path string, old []byte, oldOK bool, new []byte, newOK bool, mode fs.FileMode) string {
	if oldOK == newOK && bytes.Equal(old, new) {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "diff --git a/%s b/%s\n", path, path)
	from, to := "a/"+path, "b/"+path
	switch {
	case !oldOK:
		fmt.Fprintf(&sb, "new file mode %s\n", gitMode(mode))
		from = "/dev/null"
	case !newOK:
		fmt.Fprintf(&sb, "deleted file mode %s\n", gitMode(mode))
		to = "/dev/null"
	}
	if bytes.Equal(old, new) {
		return sb.String() // an empty file created or deleted: header only
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	unifiedHunks(&sb, splitLines(old), splitLines(new))
	return sb.String()
}

func gitMode(m fs.FileMode) string {
	if m&0o111 != 0 {
		return "100755"
	}
	return "100644"
}
