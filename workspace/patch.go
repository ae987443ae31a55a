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

// hunkLines splits a parsed hunk into the lines it expects (old) and the
// lines it writes (new), each keeping its "\n" unless the patch marked it
// as the file's unterminated last line.
func hunkLines(h *diff.Hunk) (old, new []string, err error) {
	body := string(h.Body)
	noNL := !strings.HasSuffix(body, "\n") // last line lacks its newline
	var lines []patchLine
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
			return nil, nil, fmt.Errorf("bad hunk line %q", raw)
		}
		nl := "\n"
		if end == len(body) && noNL {
			nl = ""
		}
		if op == '-' && h.OrigNoNewlineAt > 0 && int(h.OrigNoNewlineAt) == end {
			nl = ""
		}
		lines = append(lines, patchLine{op, text + nl})
		off = end
	}
	for _, l := range lines {
		if l.op != '+' {
			old = append(old, l.text)
		}
		if l.op != '-' {
			new = append(new, l.text)
		}
	}
	return old, new, nil
}

// applyHunks applies the hunks of one file to data, trying each hunk at
// its stated line first and then at growing distances up to patchFuzz.
func applyHunks(name string, data []byte, hunks []*diff.Hunk) ([]byte, error) {
	lines := splitLines(data)
	var out []string
	next := 0  // first line of lines not yet copied
	shift := 0 // how far earlier hunks moved
	for i, h := range hunks {
		old, new, err := hunkLines(h)
		if err != nil {
			return nil, &PatchError{File: name, Hunk: i + 1, Err: err}
		}
		want := int(h.OrigStartLine) - 1
		if h.OrigLines == 0 {
			want = int(h.OrigStartLine)
		}
		want += shift
		at := -1
		for d := 0; d <= patchFuzz && at < 0; d++ {
			for _, p := range []int{want - d, want + d} {
				if p >= next && p+len(old) <= len(lines) && equalLines(lines[p:p+len(old)], old) {
					at = p
					break
				}
				if d == 0 {
					break
				}
			}
		}
		if at < 0 {
			return nil, &PatchError{File: name, Hunk: i + 1, Err: ErrHunkMismatch}
		}
		shift += at - want
		out = append(out, lines[next:at]...)
		out = append(out, new...)
		next = at + len(old)
	}
	out = append(out, lines[next:]...)
	var buf bytes.Buffer
	for _, l := range out {
		buf.WriteString(l)
	}
	return buf.Bytes(), nil
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// patchPath turns a diff header name into a workspace path: "" for
// /dev/null, the a/ or b/ prefix stripped.
func patchPath(name string) string {
	name = strings.TrimSpace(name)
	if name == "/dev/null" || name == "" {
		return ""
	}
	if i := strings.IndexByte(name, '\t'); i >= 0 {
		name = name[:i] // a timestamp after the name
	}
	for _, p := range []string{"a/", "b/"} {
		if strings.HasPrefix(name, p) {
			return name[len(p):]
		}
	}
	return name
}

// ApplyPatch applies a unified diff of one or more files to the change
// set: every hunk is checked against the pending content (with a small
// fuzz for shifted line numbers), and either every file applies or none
// does. Files are created or deleted through /dev/null. It returns the
// paths changed.
func (c *ChangeSet) ApplyPatch(patch []byte) ([]string, error) {
	fds, err := diff.ParseMultiFileDiff(patch)
	if err != nil {
		return nil, fmt.Errorf("apply patch: parse: %w", err)
	}
	if len(fds) == 0 {
		return nil, errors.New("apply patch: no file diffs found")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	type result struct {
		k, abs string
		data   []byte
		exists bool
	}
	staged := map[string]*result{}
	var order []string
	for _, fd := range fds {
		oldName, newName := patchPath(fd.OrigName), patchPath(fd.NewName)
		name := newName
		if name == "" {
			name = oldName
		}
		if name == "" {
			return nil, errors.New("apply patch: a file diff names no file")
		}
		k, abs, err := c.key(name)
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
		case oldName == "" && r.exists:
			return nil, &PatchError{File: k, Err: errors.New("file to create already exists")}
		case oldName != "" && !r.exists:
			return nil, &PatchError{File: k, Err: errors.New("file to patch does not exist")}
		case oldName != "" && newName != "" && oldName != newName:
			return nil, &PatchError{File: k, Err: errors.New("renames in patches are not supported; use rename")}
		}
		out, err := applyHunks(k, r.data, fd.Hunks)
		if err != nil {
			return nil, fmt.Errorf("apply patch: %w", err)
		}
		if newName == "" {
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
	return order, nil
}
