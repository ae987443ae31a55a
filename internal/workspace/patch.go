package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/sourcegraph/go-diff/diff"
)

// patchFuzz is how far (in lines) a hunk may have moved from the line
// number its header gives and still apply.
const patchFuzz = 100

// ErrHunkMismatch: a hunk's context and removed lines are not in the file.
var ErrHunkMismatch = errors.New("hunk does not match the file")

// Diff is the unified diff of every pending change, in path order; it
// applies with `git apply` or `patch -p1`.
func (c *ChangeSet) Diff() string {
	var sb strings.Builder
	for _, ch := range c.Changes() {
		sb.WriteString(c.DiffFile(ch.Path))
	}
	return sb.String()
}

// DiffFile is the unified diff of one file's pending change ("" if none).
func (c *ChangeSet) DiffFile(rel string) string {
	k, err := CleanPath(rel)
	if err != nil {
		return ""
	}
	c.mu.RLock()
	ch, ok := c.changes[k]
	base, baseOK := c.baseDoc[k]
	c.mu.RUnlock()
	if !ok {
		return ""
	}
	mode := ch.Mode
	if ch.Op == OpDelete {
		mode = defaultMode
		if abs, err := c.root.Resolve(k); err == nil {
			if fi, err := statMode(abs); err == nil {
				mode = fi
			}
		}
	}
	return fileDiff(k, base, baseOK, ch.Content, ch.Op != OpDelete, mode)
}

// patchLine is one line of a hunk body.
type patchLine struct {
	op   byte // ' ', '-', '+'
	text string
}

// hunk is one hunk of a file patch, whichever format it came in.
type hunk struct {
	lines []patchLine // each keeps its "\n" unless it is an unterminated last line
	start int         // 0-based line the old lines are expected at; -1: anywhere (V4A)
	// anchors are V4A "@@ text" lines, found in order before the hunk.
	anchors []string
	eof     bool // V4A "*** End of File": the hunk ends the file
}

// old is what the hunk expects (context and removed lines).
func (h *hunk) old() []string {
	var out []string
	for _, l := range h.lines {
		if l.op != '+' {
			out = append(out, l.text)
		}
	}
	return out
}

// fromDiff converts a parsed unified-diff hunk.
func fromDiff(h *diff.Hunk) (hunk, error) {
	body := string(h.Body)
	noNL := !strings.HasSuffix(body, "\n") // last line lacks its newline
	out := hunk{start: int(h.OrigStartLine) - 1}
	if h.OrigLines == 0 {
		out.start = int(h.OrigStartLine)
	}
	for off := 0; off < len(body); {
		end := strings.IndexByte(body[off:], '\n')
		var raw string
		if end < 0 {
			raw, end = body[off:], len(body)
		} else {
			raw, end = body[off:off+end], off+end+1
		}
		op, text := byte(' '), ""
		if raw != "" {
			op, text = raw[0], raw[1:]
		}
		if op != ' ' && op != '-' && op != '+' {
			return hunk{}, fmt.Errorf("bad hunk line %q", raw)
		}
		nl := "\n"
		if end == len(body) && noNL {
			nl = ""
		}
		if op == '-' && h.OrigNoNewlineAt > 0 && int(h.OrigNoNewlineAt) == end {
			nl = ""
		}
		out.lines = append(out.lines, patchLine{op, text + nl})
		off = end
	}
	return out, nil
}

// applyHunks applies the hunks of one file to data. A hunk with a line
// number is tried there first and then at growing distances up to
// patchFuzz; one without (V4A) at the first place after its anchors. When
// the exact lines are nowhere, the whitespace ladder may find the one
// place they mean (ladder.go).
func applyHunks(name string, data []byte, hunks []hunk, tolerant *[]string) ([]byte, error) {
	lines := splitLines(data)
	var out []string
	next := 0  // first line of lines not yet copied
	shift := 0 // how far earlier hunks moved
	for i, h := range hunks {
		old := h.old()
		from, err := afterAnchors(lines, next, h.anchors)
		if err != nil {
			return nil, &PatchError{File: name, Hunk: i + 1, Err: ErrHunkMismatch, Detail: err.Error()}
		}
		at, lvl := seekHunk(lines, old, h, from, shift)
		if at < 0 {
			return nil, &PatchError{File: name, Hunk: i + 1, Err: ErrHunkMismatch, Detail: mismatch(lines, old, h, shift)}
		}
		if h.start >= 0 {
			shift = at - h.start
		}
		if lvl != Exact {
			*tolerant = append(*tolerant, fmt.Sprintf("%s hunk %d at line %d %s", name, i+1, at+1, lvl))
		}
		region, err := hunkRegion(lines[at:at+len(old)], h, lvl)
		if err != nil {
			return nil, &PatchError{File: name, Hunk: i + 1, Err: ErrHunkMismatch, Detail: err.Error()}
		}
		out = append(out, lines[next:at]...)
		out = append(out, region...)
		next = at + len(old)
	}
	out = append(out, lines[next:]...)
	var buf bytes.Buffer
	for _, l := range out {
		buf.WriteString(l)
	}
	return buf.Bytes(), nil
}

// afterAnchors returns the line after the last of the anchors, each
// found (ignoring surrounding whitespace) after the one before.
func afterAnchors(lines []string, from int, anchors []string) (int, error) {
	for _, a := range anchors {
		at := seekLines(lines, []string{a}, from, Indentation, 1)
		if len(at) == 0 {
			return 0, fmt.Errorf("its @@ line %q is not in the file after line %d", strings.TrimSpace(a), from)
		}
		from = at[0] + 1
	}
	return from, nil
}

// seekHunk finds where h's old lines are: exactly (nearest the stated
// line, or the first place after from), else at the one place a tolerant
// level finds. at is -1 when nowhere.
func seekHunk(lines, old []string, h hunk, from, shift int) (at int, l Level) {
	fits := func(p int) bool {
		return p >= from && p+len(old) <= len(lines) && (!h.eof || p+len(old) == len(lines))
	}
	if h.start >= 0 {
		want := h.start + shift
		for d := 0; d <= patchFuzz; d++ {
			for _, p := range []int{want - d, want + d} {
				if fits(p) && equalLines(lines[p:p+len(old)], old) {
					return p, Exact
				}
				if d == 0 {
					break
				}
			}
		}
	} else if len(old) == 0 {
		if h.eof {
			return len(lines), Exact
		}
		return from, Exact
	}
	for _, l := range []Level{Exact, TrailingSpace, Indentation} {
		if l == Exact && h.start >= 0 {
			continue // searched nearest the stated line above
		}
		var cands []int
		for _, p := range seekLines(lines, old, from, l, 0) {
			if fits(p) {
				cands = append(cands, p)
			}
		}
		switch {
		case len(cands) > 0 && l == Exact:
			return cands[0], Exact
		case len(cands) == 1:
			return cands[0], l
		case len(cands) > 1:
			return -1, l // a tolerant match must be unique
		}
	}
	return -1, Exact
}

// hunkRegion is what h writes over the matched lines: its context lines
// as the file has them, its added lines in the file's indentation and
// line ending when it matched tolerantly.
func hunkRegion(matched []string, h hunk, l Level) ([]string, error) {
	var f reindent = func(s string) string { return s }
	eol := "\n"
	if l != Exact {
		var model []string
		for _, pl := range h.lines {
			if pl.op != '+' {
				model = append(model, strings.TrimRight(pl.text, "\r\n"))
			}
		}
		var ok bool
		if f, ok = learnIndent(matched, model); !ok {
			return nil, fmt.Errorf("its lines match lines only %s, and their indentation does not map onto the file's line by line; the file has:\n%s", l, numbered(matched, 0, len(matched)))
		}
		eol = eolOf(matched)
	}
	var out []string
	oi := 0
	for _, pl := range h.lines {
		switch pl.op {
		case ' ':
			out = append(out, matched[oi])
			oi++
		case '-':
			oi++
		case '+':
			if l == Exact {
				out = append(out, pl.text)
				continue
			}
			end := ""
			if strings.HasSuffix(pl.text, "\n") {
				end = eol
			}
			out = append(out, adaptLine(f, strings.TrimRight(pl.text, "\r\n"), end))
		}
	}
	return out, nil
}

// maxShown caps the lines a hunk mismatch shows of each side.
const maxShown = 20

// mismatch shows a failing hunk's expected lines beside the file's
// closest ones, and names a whitespace difference when there is one.
func mismatch(lines, old []string, h hunk, shift int) string {
	var b strings.Builder
	where := ""
	if h.start >= 0 {
		where = fmt.Sprintf(" at line %d", h.start+shift+1)
	}
	fmt.Fprintf(&b, "expected%s (the hunk's context and removed lines):\n", where)
	for _, l := range old[:min(len(old), maxShown)] {
		fmt.Fprintf(&b, "\t%s\n", strings.TrimRight(l, "\r\n"))
	}
	if len(old) == 0 {
		return strings.TrimRight(b.String(), "\n")
	}
	at, ok := closest(lines, old)
	if !ok {
		fmt.Fprintf(&b, "no %d-line window of the file (%d lines) resembles them; read_file the file and rebuild the hunk from its lines", len(old), len(lines))
		return b.String()
	}
	end := at + min(len(old), maxShown)
	fmt.Fprintf(&b, "closest actual lines %d–%d:\n%s", at+1, at+len(old), numbered(lines, at, end))
	if why := whyDiffers(lines[at:at+len(old)], old); why != "" {
		fmt.Fprintf(&b, "difference: %s\n", why)
	}
	return strings.TrimRight(b.String(), "\n")
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FilePatch is one file of a parsed patch: the workspace path it acts on,
// decoded once by ParsePatch, and what it does there.
type FilePatch struct {
	// Path is the clean workspace-relative path the patch writes: the
	// header name after unquoting, unescaping, dropping the a/ or b/
	// prefix and cleaning "." and ".." elements.
	Path string
	// Op is OpCreate (from /dev/null), OpDelete (to /dev/null) or
	// OpModify.
	Op    Op
	hunks []hunk
	// whole: a V4A "*** Delete File", which removes whatever the file holds.
	whole bool
}

// Patch is a parsed unified diff, its file names decoded. It is the one
// form of a patch that both a policy check (Paths) and the change set
// (ApplyParsed) see, so what is checked is what is written.
type Patch struct {
	Files []FilePatch
	// Tolerant names, after ApplyParsed, each hunk that matched only by
	// the whitespace ladder ("f.go hunk 2 at line 40 ignoring
	// indentation and trailing whitespace").
	Tolerant []string
}

// Paths returns the distinct paths the patch writes, in order.
func (p *Patch) Paths() []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range p.Files {
		if !seen[f.Path] {
			seen[f.Path] = true
			out = append(out, f.Path)
		}
	}
	return out
}

// ParsePatch parses a unified diff (one or more files, git headers
// allowed) and decodes every file name into the workspace path it
// writes. It is the only place patch names are decoded: quoted names with
// C escapes ("b/\056git/config"), a/ and b/ prefixes, ".." elements and
// header-only "diff --git" files all come out as the final path. A name
// that cannot be decoded, leaves the workspace, holds a control character
// or renames a file is an error, and so is a file diff whose name the
// parser could not tell.
func ParsePatch(patch []byte) (*Patch, error) {
	if isV4A(patch) {
		return parseV4A(string(patch))
	}
	fds, err := diff.ParseMultiFileDiff(patch)
	if err != nil {
		return nil, fmt.Errorf("apply patch: parse: %w", err)
	}
	if len(fds) == 0 {
		return nil, errNoDiffs
	}
	p := &Patch{}
	for _, fd := range fds {
		oldName, oldNull, err := patchName(fd.OrigName)
		if err != nil {
			return nil, err
		}
		newName, newNull, err := patchName(fd.NewName)
		if err != nil {
			return nil, err
		}
		f := FilePatch{Path: newName, Op: OpModify}
		for _, dh := range fd.Hunks {
			h, err := fromDiff(dh)
			if err != nil {
				return nil, &PatchError{File: newName, Hunk: len(f.hunks) + 1, Err: err}
			}
			f.hunks = append(f.hunks, h)
		}
		switch {
		case oldNull && newNull:
			return nil, errors.New("apply patch: a file diff goes from /dev/null to /dev/null")
		case oldNull:
			f.Op = OpCreate
		case newNull:
			f.Path, f.Op = oldName, OpDelete
		case oldName != newName:
			return nil, &PatchError{File: newName, Err: errors.New("renames in patches are not supported; use rename_file")}
		}
		p.Files = append(p.Files, f)
	}
	return p, nil
}

// patchName decodes one header name as the diff parser left it (it has
// already unquoted a name in double quotes, C escapes included): null for
// /dev/null, else the clean workspace path with one a/ or b/ prefix
// dropped.
func patchName(name string) (path string, null bool, err error) {
	if name == "/dev/null" {
		return "", true, nil
	}
	if name == "" {
		return "", false, errors.New("apply patch: a file diff names no file (ambiguous or missing header)")
	}
	if strings.HasPrefix(name, `"`) {
		return "", false, fmt.Errorf("apply patch: file name %s is not a well-formed quoted name", name)
	}
	for _, pre := range []string{"a/", "b/"} {
		if strings.HasPrefix(name, pre) {
			name = name[len(pre):]
			break
		}
	}
	k, err := v4aName(name)
	return k, false, err
}

// ApplyPatch parses a unified diff with ParsePatch and applies it with
// ApplyParsed. It returns the paths changed.
func (c *ChangeSet) ApplyPatch(patch []byte) ([]string, error) {
	p, err := ParsePatch(patch)
	if err != nil {
		return nil, err
	}
	return c.ApplyParsed(p)
}

// ApplyParsed applies a parsed patch to the change set: every hunk is
// checked against the pending content (with a small fuzz for shifted line
// numbers), and either every file applies or none does. Files are created
// or deleted through /dev/null. It writes exactly p's paths (through the
// same resolution as WriteFile) and returns the canonical paths changed.
func (c *ChangeSet) ApplyParsed(p *Patch) ([]string, error) {
	if p == nil || len(p.Files) == 0 {
		return nil, errNoDiffs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	type result struct {
		k, abs string
		data   []byte
		exists bool
	}
	staged := map[string]*result{}
	var order, tolerant []string
	for _, f := range p.Files {
		k, abs, err := c.key(f.Path)
		if err != nil {
			return nil, fmt.Errorf("apply patch: %w", err)
		}
		r, seen := staged[k]
		if !seen {
			data, _, ok, err := c.current(k, abs)
			if err != nil {
				return nil, fmt.Errorf("apply patch: %w", err)
			}
			r = &result{k: k, abs: abs, data: data, exists: ok}
			staged[k] = r
			order = append(order, k)
		}
		switch {
		case f.Op == OpCreate && r.exists:
			return nil, &PatchError{File: k, Err: errors.New("file to create already exists")}
		case f.Op != OpCreate && !r.exists:
			return nil, &PatchError{File: k, Err: errors.New("file to patch does not exist")}
		}
		var out []byte
		if !f.whole {
			out, err = applyHunks(k, r.data, f.hunks, &tolerant)
			if err != nil {
				return nil, err
			}
		}
		if f.Op == OpDelete {
			if len(out) != 0 {
				return nil, &PatchError{File: k, Err: errors.New("deletion leaves content behind")}
			}
			r.data, r.exists = nil, false
			continue
		}
		r.data, r.exists = out, true
	}
	for _, k := range order {
		r := staged[k]
		_, mode, _, err := c.current(k, r.abs)
		if err != nil {
			return nil, fmt.Errorf("apply patch: %w", err)
		}
		if err := c.set(k, r.abs, r.data, mode, r.exists, c.fromOf(k)); err != nil {
			return nil, fmt.Errorf("apply patch: %w", err)
		}
	}
	p.Tolerant = tolerant
	return order, nil
}
