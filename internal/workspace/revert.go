package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// MarshalWithBases is MarshalSealed keeping the content of every base,
// also of bases the workspace still holds: the snapshot taken before
// Apply, from which Revert can undo the applied change after the
// workspace moved on.
func (c *ChangeSet) MarshalWithBases(s Sealer) ([]byte, error) { return c.marshal(s, true) }

// ErrNoBase: a change's base content was not recorded (a snapshot that
// kept only its hash), so it cannot be reverted.
var ErrNoBase = errors.New("its content before the change was not recorded")

// Revert returns the change set that, applied, undoes c after c was
// applied: every file c changed goes back to its base, keeping the edits
// made to it since (three-way per hunk: base = c's content, ours = the
// file now, theirs = c's base). merged lists the files where later edits
// were kept. A file whose later edits overlap c's hunks, or one that
// cannot be merged line by line (created by c and edited since, deleted
// by c and created again, deleted since), is a conflict; then the change
// set is nil and nothing should be written. c itself is not changed.
func (c *ChangeSet) Revert() (*ChangeSet, []string, []FileConflict, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := NewChangeSet(c.root)
	var merged []string
	var conflicts []FileConflict
	for _, k := range sortedKeys(c.changes) {
		ch := c.changes[k]
		cur, err := c.root.ReadFile(k)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscallENOTDIR) {
			return nil, nil, nil, fmt.Errorf("revert %s: %w", k, err)
		}
		err = nil
		// A base read back from the workspace (a snapshot that kept only
		// its hash) is what the change replaced only if the hash says so.
		base, hadBase := c.baseDoc[k]
		hadBase = hadBase && hashOf(base) == ch.BaseHash
		conflict := func(reason string) { conflicts = append(conflicts, FileConflict{Path: k, Reason: reason}) }
		switch {
		case ch.Op == OpDelete && exists:
			conflict("the change deleted this file, and it was created again since")
		case ch.Op == OpDelete && !hadBase:
			conflict(ErrNoBase.Error())
		case ch.Op == OpDelete:
			err = n.WriteFile(k, base)
		case !exists:
			conflict("the file was deleted since the change was applied")
		case ch.BaseHash == "" && !bytes.Equal(cur, ch.Content):
			conflict("the change created this file, and it was edited since (delete it yourself if those edits can go)")
		case ch.BaseHash == "":
			err = n.Delete(k)
		case !hadBase:
			conflict(ErrNoBase.Error())
		default:
			out, hunks := Merge3(ch.Content, cur, base)
			if len(hunks) > 0 {
				conflicts = append(conflicts, FileConflict{Path: k, Hunks: hunks})
				continue
			}
			if !bytes.Equal(cur, ch.Content) {
				merged = append(merged, k)
			}
			if !bytes.Equal(out, cur) {
				err = n.WriteFile(k, out)
			}
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("revert %s: %w", k, err)
		}
	}
	slices.SortFunc(conflicts, func(a, b FileConflict) int { return strings.Compare(a.Path, b.Path) })
	if len(conflicts) > 0 {
		return nil, nil, conflicts, nil
	}
	return n, merged, nil, nil
}

// Describe says where a file conflict is, for a person or a model: the
// reason, or the lines of the file as it is now that overlap the other
// side's hunks (1-based, inclusive).
func (f FileConflict) Describe() string {
	if f.Reason != "" {
		return f.Path + ": " + f.Reason
	}
	var parts []string
	for _, h := range f.Hunks {
		switch len(h.Ours) {
		case 0:
			parts = append(parts, fmt.Sprintf("at line %d", h.Ours0+1))
		case 1:
			parts = append(parts, fmt.Sprintf("line %d", h.Ours0+1))
		default:
			parts = append(parts, fmt.Sprintf("lines %d-%d", h.Ours0+1, h.Ours0+len(h.Ours)))
		}
	}
	return f.Path + ": " + strings.Join(parts, ", ")
}
