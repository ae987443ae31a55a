package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// The V4A envelope GPT-family models write for apply_patch:
//
//	*** Begin Patch
//	*** Update File: path/to/file.go
//	@@ func Name(
//	 context line
//	-removed line
//	+added line
//	*** Add File: new.go
//	+its content
//	*** Delete File: old.go
//	*** End Patch
//
// Hunks carry no line numbers: "@@ text" lines anchor them, and each is
// looked for after the one before.

// errNoDiffs explains both accepted formats with a short example.
var errNoDiffs = errors.New("apply patch: no file diffs found; give a unified diff or a *** Begin Patch envelope, e.g.\n" +
	"--- a/f.go\n+++ b/f.go\n@@ -3,1 +3,1 @@\n-old line\n+new line\n" +
	"or\n*** Begin Patch\n*** Update File: f.go\n@@ func F(\n-old line\n+new line\n*** End Patch")

const v4aBegin = "*** Begin Patch"

func isV4A(patch []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(patch, " \t\r\n"), []byte(v4aBegin))
}

// v4aParser walks the envelope line by line.
type v4aParser struct {
	lines []string
	i     int
	p     *Patch
}

func parseV4A(text string) (*Patch, error) {
	text = strings.ReplaceAll(strings.TrimLeft(text, " \t\r\n"), "\r\n", "\n")
	v := &v4aParser{lines: strings.Split(strings.TrimRight(text, "\n"), "\n"), i: 1, p: &Patch{}}
	for v.i < len(v.lines) {
		l := v.lines[v.i]
		switch {
		case strings.TrimSpace(l) == "*** End Patch":
			v.i = len(v.lines)
		case strings.TrimSpace(l) == "":
			v.i++
		default:
			if err := v.file(l); err != nil {
				return nil, err
			}
		}
	}
	if len(v.p.Files) == 0 {
		return nil, errNoDiffs
	}
	return v.p, nil
}

// file parses one "*** Add/Delete/Update File:" section.
func (v *v4aParser) file(header string) error {
	op, name, ok := v4aHeader(header)
	if !ok {
		return fmt.Errorf("apply patch: line %d: want *** Add File:, *** Update File:, *** Delete File: or *** End Patch, got %q", v.i+1, header)
	}
	path, err := v4aName(name)
	if err != nil {
		return err
	}
	v.i++
	switch op {
	case OpDelete:
		v.p.Files = append(v.p.Files, FilePatch{Path: path, Op: OpDelete, whole: true})
		return nil
	case OpCreate:
		h := hunk{start: 0}
		for ; v.i < len(v.lines) && !strings.HasPrefix(v.lines[v.i], "***"); v.i++ {
			l := v.lines[v.i]
			if !strings.HasPrefix(l, "+") {
				return fmt.Errorf("apply patch: line %d: every line of *** Add File: %s starts with +, got %q", v.i+1, path, l)
			}
			h.lines = append(h.lines, patchLine{'+', l[1:] + "\n"})
		}
		v.p.Files = append(v.p.Files, FilePatch{Path: path, Op: OpCreate, hunks: []hunk{h}})
		return nil
	}
	if v.i < len(v.lines) && strings.HasPrefix(v.lines[v.i], "*** Move to:") {
		return &PatchError{File: path, Err: errors.New("renames in patches are not supported; use rename_file")}
	}
	f := FilePatch{Path: path, Op: OpModify}
	cur := hunk{start: -1}
	flush := func() {
		if len(cur.lines) > 0 {
			f.hunks = append(f.hunks, cur)
		}
		cur = hunk{start: -1}
	}
	for ; v.i < len(v.lines); v.i++ {
		l := v.lines[v.i]
		switch {
		case strings.TrimSpace(l) == "*** End of File":
			cur.eof = true
			flush()
		case strings.HasPrefix(l, "***"):
			flush()
			return v.done(f)
		case strings.HasPrefix(l, "@@"):
			if len(cur.lines) > 0 {
				flush()
			}
			if a := strings.TrimSpace(strings.TrimPrefix(l, "@@")); a != "" {
				cur.anchors = append(cur.anchors, a)
			}
		case l == "":
			cur.lines = append(cur.lines, patchLine{' ', "\n"}) // a context line whose space was dropped
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			cur.lines = append(cur.lines, patchLine{l[0], l[1:] + "\n"})
		default:
			return fmt.Errorf("apply patch: line %d: in *** Update File: %s each line starts with ' ', '-' or '+', or is an @@ line, got %q", v.i+1, path, l)
		}
	}
	flush()
	return v.done(f)
}

func (v *v4aParser) done(f FilePatch) error {
	if len(f.hunks) == 0 {
		return &PatchError{File: f.Path, Err: errors.New("*** Update File: has no hunk")}
	}
	v.p.Files = append(v.p.Files, f)
	return nil
}

func v4aHeader(l string) (Op, string, bool) {
	for _, h := range []struct {
		prefix string
		op     Op
	}{{"*** Add File:", OpCreate}, {"*** Delete File:", OpDelete}, {"*** Update File:", OpModify}} {
		if rest, ok := strings.CutPrefix(l, h.prefix); ok {
			return h.op, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// v4aName decodes a V4A file name (and a unified diff's, once its a/ or
// b/ prefix is dropped): the clean workspace path; control characters,
// an escape and the root are refused.
func v4aName(name string) (string, error) {
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("apply patch: file name %q holds a control character", name)
		}
	}
	k, err := CleanPath(name)
	if err != nil {
		return "", fmt.Errorf("apply patch: %w", err)
	}
	if k == "." {
		return "", fmt.Errorf("apply patch: file name %q names the workspace root", name)
	}
	return k, nil
}
