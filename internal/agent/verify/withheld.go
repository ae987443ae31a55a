package verify

import (
	"encoding/json"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Checks see the workspace's real files, those the read policy keeps from
// the model too (a .env an integration test needs), so that their verdict
// is the user's machine's. What a check prints of such a file must still
// not reach the model or the trace: every value of a withheld file
// (Options.Withheld) is replaced in the check's result by "[withheld:
// PATH]" before anyone sees it (OnCheck, the red cache, the report).

// Bounds on what is read of the withheld files for their values: the
// first MaxWithheldRead bytes of each, MaxWithheldValues bytes of values
// in all. A value past them is not redacted.
const (
	MaxWithheldRead   = 64 << 10
	MaxWithheldValues = 1 << 20
)

// MinWithheldValue is the shortest line or value that is redacted: a
// shorter one (DEBUG=1, PORT=80) is no secret and would mangle the output.
const MinWithheldValue = 6

// minPartial is the shortest piece of a value redacted next to a "bytes
// left out" marker, where output was cut. At a text's own start and end a
// piece must be MinWithheldValue long: there most texts are whole, and a
// 3-byte piece such as "---" (a key file's first line) would take "---
// FAIL" lines too.
const minPartial = 3

// withheldValue is one value to redact and what it is replaced with.
type withheldValue struct{ val, label string }

// withholder redacts the values of the withheld files; nil redacts nothing.
// The values are indexed by their first MinWithheldValue bytes (a whole
// match starts with them) and by their first and last minPartial bytes
// (a piece cut at a marker), so a text is scanned once, however many
// values there are.
type withholder struct {
	vals   []withheldValue // longest first
	head   map[string][]int
	first  map[string][]int
	last   map[string][]int
	maxLen int
}

// newWithholder reads the values of the withheld files under root (nil
// when there are none to redact).
func newWithholder(root string, withheld []string) *withholder {
	w := &withholder{}
	seen := map[string]bool{}
	total := 0
	for _, rel := range withheld {
		if total >= MaxWithheldValues {
			break
		}
		label := "[withheld: " + rel + "]"
		for _, v := range valuesOf(rel, readHead(filepath.Join(root, filepath.FromSlash(rel)))) {
			for _, spelling := range []string{v, jsonInner(v)} {
				if !seen[spelling] && total < MaxWithheldValues {
					seen[spelling] = true
					total += len(spelling)
					w.vals = append(w.vals, withheldValue{spelling, label})
				}
			}
		}
	}
	if len(w.vals) == 0 {
		return nil
	}
	sort.SliceStable(w.vals, func(i, j int) bool { return len(w.vals[i].val) > len(w.vals[j].val) })
	w.head, w.first, w.last = map[string][]int{}, map[string][]int{}, map[string][]int{}
	for i, v := range w.vals {
		w.head[v.val[:MinWithheldValue]] = append(w.head[v.val[:MinWithheldValue]], i)
		w.first[v.val[:minPartial]] = append(w.first[v.val[:minPartial]], i)
		w.last[v.val[len(v.val)-minPartial:]] = append(w.last[v.val[len(v.val)-minPartial:]], i)
		w.maxLen = max(w.maxLen, len(v.val))
	}
	return w
}

// readHead is the first MaxWithheldRead bytes of the file at p (nothing
// when it cannot be read: then the check cannot read it either).
func readHead(p string) []byte {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, MaxWithheldRead))
	return data
}

// isEnvFile reports a dotenv-style file: .env, .env.local, prod.env.
func isEnvFile(rel string) bool {
	base := path.Base(rel)
	return base == ".env" || strings.HasPrefix(base, ".env.") || strings.HasSuffix(base, ".env")
}

// valuesOf lists what is redacted of a withheld file's content: of a
// dotenv file the value of each KEY=VALUE line (quotes taken off too); of
// any other file each line, trimmed, and the value of each line that
// reads KEY=VALUE or KEY: VALUE. Each at least MinWithheldValue bytes.
func valuesOf(rel string, data []byte) []string {
	env := isEnvFile(rel)
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); len(s) >= MinWithheldValue {
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || (env && strings.HasPrefix(line, "#")) {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok && !env {
			k, v, ok = strings.Cut(line, ":")
		}
		if !env || !ok {
			add(line)
		}
		if ok && !strings.ContainsAny(strings.TrimSpace(k), " \t") {
			add(v)
			add(unquote(strings.TrimSpace(v)))
		}
	}
	return out
}

// unquote takes the quotes off a quoted value ('x', "x", `x`); a trailing
// comment after an unquoted value goes too.
func unquote(v string) string {
	if len(v) >= 2 && strings.ContainsRune(`"'`+"`", rune(v[0])) {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return v[1 : 1+end]
		}
	}
	if i := strings.Index(v, " #"); i >= 0 {
		return v[:i]
	}
	return v
}

// jsonInner is v as it appears inside a JSON string.
func jsonInner(v string) string {
	b, _ := json.Marshal(v) // a string always encodes
	return string(b[1 : len(b)-1])
}

// String redacts s: every occurrence of a value, and where values overlap
// the span of all of them, so no prefix or suffix of one stays; at s's
// ends and around a "left out" marker, where a value may have been cut,
// a piece of a value is redacted too (cutPoints).
func (w *withholder) String(s string) string {
	if w == nil || s == "" {
		return s
	}
	var spans []span
	for at := 0; at+MinWithheldValue <= len(s); at++ {
		for _, i := range w.head[s[at:at+MinWithheldValue]] {
			if strings.HasPrefix(s[at:], w.vals[i].val) {
				spans = append(spans, span{at, at + len(w.vals[i].val), i})
				break // the longest value starting here
			}
		}
	}
	for _, c := range cutPoints(s) {
		spans = append(spans, w.partials(s, c.at, c.least)...)
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var out strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].from <= cur.to; i++ {
			cur.to = max(cur.to, spans[i].to)
		}
		out.WriteString(s[last:cur.from])
		out.WriteString(w.vals[cur.val].label)
		last = cur.to
	}
	out.WriteString(s[last:])
	return out.String()
}

// span is a byte range of output to redact, with the value it holds.
type span struct{ from, to, val int }

// cut is a place where a value may have been cut, and the shortest piece
// of a value redacted there.
type cut struct{ at, least int }

// cutPoints are the places of s where a value may have been cut: its
// start and end, and both sides of each marker of bytes left out.
func cutPoints(s string) []cut {
	points := []cut{{0, MinWithheldValue}, {len(s), MinWithheldValue}}
	for off := 0; ; {
		i := strings.Index(s[off:], "\n[… ")
		if i < 0 {
			return points
		}
		i += off
		end := strings.Index(s[i+1:], "]\n")
		if end < 0 || !strings.Contains(s[i:i+1+end], "left out") {
			off = i + 1
			continue
		}
		points = append(points, cut{i, minPartial}, cut{i + 1 + end + 2, minPartial})
		off = i + 1 + end + 2
	}
}

// partials are the longest pieces of values, least bytes or more, that
// end or begin at b: a piece ending at b is a value's start, one beginning
// there its end.
func (w *withholder) partials(s string, b, least int) []span {
	var out []span
	for p := max(0, b-w.maxLen+1); p+least <= b; p++ {
		if i, ok := w.piece(w.first[s[p:p+minPartial]], func(v string) bool { return len(v) > b-p && v[:b-p] == s[p:b] }); ok {
			out = append(out, span{p, b, i})
			break
		}
	}
	for q := min(len(s), b+w.maxLen-1); q-least >= b; q-- {
		if i, ok := w.piece(w.last[s[q-minPartial:q]], func(v string) bool { return len(v) > q-b && v[len(v)-(q-b):] == s[b:q] }); ok {
			out = append(out, span{b, q, i})
			break
		}
	}
	return out
}

// piece is the first of the values is whose text fits.
func (w *withholder) piece(is []int, fits func(string) bool) (int, bool) {
	for _, i := range is {
		if fits(w.vals[i].val) {
			return i, true
		}
	}
	return 0, false
}

// result redacts every text of a check result that comes from its output,
// test names too (a subtest or a parametrized test named after a value).
// A test named so is then not found again by name: it cannot be flaky
// (greenRun), so it counts as a regression, which is the safe side.
func (w *withholder) result(c *CheckResult) {
	if w == nil {
		return
	}
	c.Output = w.String(c.Output)
	c.Preflight = w.String(c.Preflight)
	for i := range c.Problems {
		c.Problems[i] = w.String(c.Problems[i])
	}
	w.names(c.Fixed)
	if c.Tests != nil {
		w.names(c.Tests.Failed)
	}
	w.locations(c.Locations)
	for i := range c.Failures {
		c.Failures[i].Test = w.String(c.Failures[i].Test)
		c.Failures[i].Output = w.String(c.Failures[i].Output)
		w.locations(c.Failures[i].Locations)
	}
}

func (w *withholder) names(names []string) {
	for i := range names {
		names[i] = w.String(names[i])
	}
}

func (w *withholder) locations(locs []Location) {
	for i := range locs {
		locs[i].Message, locs[i].Test = w.String(locs[i].Message), w.String(locs[i].Test)
	}
}
