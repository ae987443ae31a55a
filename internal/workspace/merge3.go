package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Line hunks and the three-way merge: the review sends one edit per hunk
// of the workspace's own line diff, and a change whose file the user
// edited while the review waited is rebased onto the user's text hunk by
// hunk; only hunks that really overlap are a conflict.

// Hunk is one changed region of a line diff: lines [A0, A1) of the old
// text are replaced by lines [B0, B1) of the new (0-based; A0 == A1 is an
// insertion before old line A0, B0 == B1 a deletion).
type Hunk struct {
	A0, A1, B0, B1 int
}

// Lines splits text into lines that keep their "\n" (a "\r\n" stays whole
// in its line); the last line may lack it. Joining them gives text back.
func Lines(text []byte) []string { return splitLines(text) }

// LineHunks returns the hunks turning old into new, in order, from the
// same Myers diff that renders the change set's patches. Changed lines
// that are adjacent form one hunk; an unchanged line between two changes
// separates them.
func LineHunks(old, new []byte) []Hunk {
	return hunksOf(diffLines(splitLines(old), splitLines(new)))
}

// hunksOf groups an edit script's runs of deletions and insertions.
func hunksOf(edits []lineEdit) []Hunk {
	var out []Hunk
	ai, bi := 0, 0 // lines of a and b consumed so far
	var cur *Hunk
	for _, e := range edits {
		switch e.kind {
		case editEqual:
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			ai++
			bi++
			continue
		}
		if cur == nil {
			cur = &Hunk{A0: ai, A1: ai, B0: bi, B1: bi}
		}
		if e.kind == editDelete {
			ai++
			cur.A1 = ai
		} else {
			bi++
			cur.B1 = bi
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// MergeConflict is a region both sides changed differently: base lines
// [Base0, Base1) became Ours in our text (lines [Ours0, Ours0+len(Ours)))
// and Theirs in theirs (lines [Theirs0, Theirs0+len(Theirs))). Line
// numbers are 0-based.
type MergeConflict struct {
	Base0, Base1 int
	Ours0        int
	Ours         []string
	Theirs0      int
	Theirs       []string
}

// Merge3 merges two descendants of base line by line: every hunk only one
// side made is taken from that side, a hunk both sides made identically
// once. Hunks of the two sides that overlap in base (share a base line,
// insert at the same place, or one inserts strictly inside the other's
// replaced lines) and differ are conflicts: merged is then nil and the
// conflicts name both sides. Hunks that only touch (one ends where the
// other begins) do not conflict.
func Merge3(base, ours, theirs []byte) ([]byte, []MergeConflict) {
	bl, ol, tl := splitLines(base), splitLines(ours), splitLines(theirs)
	oh := hunksOf(diffLines(bl, ol))
	th := hunksOf(diffLines(bl, tl))
	type side struct {
		h    Hunk
		ours bool
	}
	all := make([]side, 0, len(oh)+len(th))
	for _, h := range oh {
		all = append(all, side{h, true})
	}
	for _, h := range th {
		all = append(all, side{h, false})
	}
	// By start, an insertion before a replacement at the same line (so a
	// group never starts before the base lines already consumed).
	slices.SortStableFunc(all, func(x, y side) int {
		if x.h.A0 != y.h.A0 {
			return x.h.A0 - y.h.A0
		}
		return x.h.A1 - y.h.A1
	})

	var out []string
	var conflicts []MergeConflict
	pos := 0    // base lines consumed
	oShift := 0 // ours lines minus base lines before pos
	tShift := 0 // theirs lines minus base lines before pos
	for i := 0; i < len(all); {
		// A group: hunks chained by overlap.
		lo, hi := all[i].h.A0, all[i].h.A1
		group := []side{all[i]}
		j := i + 1
		for ; j < len(all); j++ {
			h := all[j].h
			if !overlaps(lo, hi, h) {
				break
			}
			group = append(group, all[j])
			hi = max(hi, h.A1)
		}
		i = j
		out = append(out, bl[pos:lo]...)
		oStart, tStart := lo+oShift, lo+tShift
		var og, tg []Hunk
		for _, g := range group {
			if g.ours {
				og = append(og, g.h)
			} else {
				tg = append(tg, g.h)
			}
		}
		oText := applySide(bl, ol, og, lo, hi)
		tText := applySide(bl, tl, tg, lo, hi)
		switch {
		case len(tg) == 0:
			out = append(out, oText...)
		case len(og) == 0:
			out = append(out, tText...)
		case slices.Equal(oText, tText):
			out = append(out, oText...)
		default:
			conflicts = append(conflicts, MergeConflict{Base0: lo, Base1: hi, Ours0: oStart, Ours: oText, Theirs0: tStart, Theirs: tText})
		}
		oShift += len(oText) - (hi - lo)
		tShift += len(tText) - (hi - lo)
		pos = hi
	}
	if len(conflicts) > 0 {
		return nil, conflicts
	}
	out = append(out, bl[pos:]...)
	return []byte(strings.Join(out, "")), nil
}

// overlaps reports whether h conflicts with a group spanning base lines
// [lo, hi): they share a line, insert at the same place, or one inserts
// strictly inside the other.
func overlaps(lo, hi int, h Hunk) bool {
	switch {
	case h.A0 < hi && lo < h.A1: // a shared base line
		return true
	case lo == hi && h.A0 == h.A1: // two insertions
		return lo == h.A0
	case lo == hi: // the group inserts inside h
		return h.A0 < lo && lo < h.A1
	case h.A0 == h.A1: // h inserts inside the group
		return lo < h.A0 && h.A0 < hi
	}
	return false
}

// applySide is base lines [lo, hi) with one side's hunks of the group
// applied (hunks in base order, within the span).
func applySide(base, side []string, hunks []Hunk, lo, hi int) []string {
	var out []string
	pos := lo
	for _, h := range hunks {
		out = append(out, base[pos:h.A0]...)
		out = append(out, side[h.B0:h.B1]...)
		pos = h.A1
	}
	return append(out, base[pos:hi]...)
}

// FileConflict is a changed file the rebase could not carry: overlapping
// hunks (Hunks), or a change that cannot be merged line by line (a
// created, deleted or renamed file that changed under it: Reason).
type FileConflict struct {
	Path   string
	Reason string
	Hunks  []MergeConflict
}

// Rebase returns the change carried onto the workspace as it is now (open
// documents over the disk): each changed file whose current text is no
// longer its base is merged three-way (base = what the agent read, ours =
// the current text, theirs = the agent's) and its base becomes the
// current text. rebased lists those files. A file whose hunks overlap the
// user's, or whose change is not a line edit of an existing file, is a
// conflict; then the returned change set is nil. Files the agent only
// read keep their recorded bases.
func (c *ChangeSet) Rebase() (*ChangeSet, []string, []FileConflict, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := NewChangeSet(c.root)
	for k, v := range c.bases {
		n.bases[k] = v
	}
	var rebased []string
	var conflicts []FileConflict
	for k, ch := range c.changes {
		cur, err := c.root.ReadFile(k)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscallENOTDIR) {
			return nil, nil, nil, fmt.Errorf("rebase %s: %w", k, err)
		}
		curHash := ""
		if exists {
			curHash = hashOf(cur)
		}
		cp := *ch
		base, hadBase := c.baseDoc[k]
		if hadBase {
			n.baseDoc[k] = base
		}
		if curHash == ch.BaseHash {
			n.changes[k] = &cp
			continue
		}
		// A base restored as a stand-in (a snapshot that kept only its
		// hash, the file changed since) is not what the agent read.
		hadBase = hadBase && hashOf(base) == ch.BaseHash
		switch {
		case ch.Op == OpModify && ch.From == "" && exists && !hadBase:
			conflicts = append(conflicts, FileConflict{Path: k, Reason: "its content when the agent read it was not recorded, so your edits cannot be merged: put the file back as the agent saw it, or reject"})
		case ch.Op == OpModify && ch.From == "" && exists:
			merged, hunks := Merge3(base, cur, ch.Content)
			if len(hunks) > 0 {
				conflicts = append(conflicts, FileConflict{Path: k, Hunks: hunks})
				continue
			}
			cp.Content, cp.BaseHash = merged, curHash
			n.baseDoc[k], n.bases[k] = bytes.Clone(cur), curHash
			n.changes[k] = &cp
			rebased = append(rebased, k)
		case !exists:
			conflicts = append(conflicts, FileConflict{Path: k, Reason: "the file was deleted since the agent read it"})
		case ch.BaseHash == "":
			conflicts = append(conflicts, FileConflict{Path: k, Reason: "the agent creates this file, and it was created since"})
		case ch.Op == OpDelete:
			conflicts = append(conflicts, FileConflict{Path: k, Reason: "the agent deletes or renames this file, and it was edited since"})
		default:
			conflicts = append(conflicts, FileConflict{Path: k, Reason: "the agent renamed this file, and it was edited since"})
		}
	}
	slices.Sort(rebased)
	slices.SortFunc(conflicts, func(a, b FileConflict) int { return strings.Compare(a.Path, b.Path) })
	if len(conflicts) > 0 {
		return nil, nil, conflicts, nil
	}
	return n, rebased, nil, nil
}
