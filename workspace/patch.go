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
	hunks []*diff.Hunk
}

// Patch is a parsed unified diff, its file names decoded. It is the one
// form of a patch that both a policy check (Paths) and the change set
// (ApplyParsed) see, so what is checked is what is written.
type Patch struct {
	Files []FilePatch
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
	fds, err := diff.ParseMultiFileDiff(patch)
	if err != nil {
		return nil, fmt.Errorf("apply patch: parse: %w", err)
	}
	if len(fds) == 0 {
		return nil, errors.New("apply patch: no file diffs found")
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
		f := FilePatch{Path: newName, Op: OpModify, hunks: fd.Hunks}
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
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", false, fmt.Errorf("apply patch: file name %q holds a control character", name)
		}
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
	k, err := CleanPath(name)
	if err != nil {
		return "", false, fmt.Errorf("apply patch: %w", err)
	}
	if k == "." {
		return "", false, fmt.Errorf("apply patch: file name %q names the workspace root", name)
	}
	return k, false, nil
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
		out, err := applyHunks(k, r.data, f.hunks)
		if err != nil {
			return nil, fmt.Errorf("apply patch: %w", err)
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
	return order, nil
}
