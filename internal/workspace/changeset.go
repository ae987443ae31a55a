package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
)

// Op is the kind of a pending change.
type Op string

const (
	OpCreate Op = "create"
	OpModify Op = "modify"
	OpDelete Op = "delete"
)

// defaultMode is the permission of files the change set creates.
const defaultMode fs.FileMode = 0o644

// Change is one pending file change. A rename is a delete of From plus a
// create of Path with From set.
type Change struct {
	Path     string
	Op       Op
	From     string      // rename source, "" otherwise
	Content  []byte      // new content (nil for delete)
	Mode     fs.FileMode // permission bits of the new file
	BaseHash string      // sha256 hex of the content the change was based on, "" if the file did not exist
}

// same reports whether two changes leave the file in the same state.
func (a *Change) same(b *Change) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Op == b.Op && a.From == b.From && a.Mode == b.Mode && bytes.Equal(a.Content, b.Content)
}

// DirEntry is one entry of ListDir.
type DirEntry struct {
	Name  string
	IsDir bool
	Size  int64
}

// ChangeSet is an overlay of pending edits over a Root. Reads, listings,
// grep and find through it see the pending state; nothing touches the disk
// before Apply. Safe for concurrent use.
type ChangeSet struct {
	root *Root

	mu      sync.RWMutex
	changes map[string]*Change // by canonical root-relative path; never mutated once stored
	bases   map[string]string  // sha256 hex of every file read or changed ("" absent)
	baseDoc map[string][]byte  // base content of changed files that existed
	origin  map[string]*Change // changes at Clone time, for Merge
}

// NewChangeSet returns an empty change set over r.
func NewChangeSet(r *Root) *ChangeSet {
	return &ChangeSet{root: r, changes: map[string]*Change{}, bases: map[string]string{}, baseDoc: map[string][]byte{}}
}

// Root is the workspace the change set applies to.
func (c *ChangeSet) Root() *Root { return c.root }

// hashOf is the hex sha256 used for base hashes.
func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// key confines rel and returns its canonical root-relative path (symlinks
// inside the root resolved, so two names of one file share one change).
func (c *ChangeSet) key(rel string) (string, string, error) {
	abs, err := c.root.Resolve(rel)
	if err != nil {
		return "", "", err
	}
	k, err := c.root.Rel(abs)
	if err != nil {
		return "", "", err
	}
	if k == "." {
		return "", "", fmt.Errorf("%q: %w", rel, ErrIsDir)
	}
	return k, abs, nil
}

// Key returns the canonical root-relative path that a read or write of
// rel acts on: rel confined and cleaned, symlinks inside the root
// resolved. It is the resolution every ChangeSet operation uses, so a
// policy check of Key's result judges the file that will be touched.
func (c *ChangeSet) Key(rel string) (string, error) {
	if rel == "." || rel == "" {
		return ".", nil
	}
	abs, err := c.root.Resolve(rel)
	if err != nil {
		return "", err
	}
	return c.root.Rel(abs)
}

// current returns the pending view of one file: its content and mode,
// whether it exists. Callers hold c.mu.
func (c *ChangeSet) current(k, abs string) ([]byte, fs.FileMode, bool, error) {
	if ch, ok := c.changes[k]; ok {
		if ch.Op == OpDelete {
			return nil, 0, false, nil
		}
		return ch.Content, ch.Mode, true, nil
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscallENOTDIR):
		if data, ok := c.root.document(k); ok {
			return data, defaultMode, true, nil
		}
		return nil, 0, false, nil
	case err != nil:
		return nil, 0, false, fmt.Errorf("stat %s: %w", k, err)
	case fi.IsDir():
		return nil, 0, false, fmt.Errorf("%s: %w", k, ErrIsDir)
	}
	data, err := c.root.ReadFile(k)
	if err != nil {
		return nil, 0, false, err
	}
	return data, fi.Mode().Perm(), true, nil
}

// noteBase records the base of a file seen for the first time.
func (c *ChangeSet) noteBase(k string, data []byte, exists bool) {
	if _, ok := c.bases[k]; ok {
		return
	}
	if exists {
		c.bases[k] = hashOf(data)
	} else {
		c.bases[k] = ""
	}
}

// ReadFile returns the pending content of a file.
func (c *ChangeSet) ReadFile(rel string) ([]byte, error) {
	k, abs, err := c.key(rel)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	data, _, ok, err := c.current(k, abs)
	if err != nil {
		return nil, err
	}
	if _, changed := c.changes[k]; !changed {
		c.noteBase(k, data, ok)
	}
	if !ok {
		return nil, fmt.Errorf("read %s: %w", k, fs.ErrNotExist)
	}
	return bytes.Clone(data), nil
}

// set records the new state of file k (exists false: deleted). Callers
// hold c.mu and have read k through current.
func (c *ChangeSet) set(k, abs string, data []byte, mode fs.FileMode, exists bool, from string) error {
	ch, changed := c.changes[k]
	if !changed {
		base, baseMode, baseOK, err := c.current(k, abs)
		if err != nil {
			return err
		}
		c.noteBase(k, base, baseOK)
		ch = &Change{Path: k, BaseHash: c.bases[k], Op: OpCreate}
		if baseOK {
			ch.Op, ch.Mode = OpModify, baseMode
			c.baseDoc[k] = base
			if mode == 0 {
				mode = baseMode
			}
		}
	}
	baseExists := ch.BaseHash != ""
	_, hasDoc := c.baseDoc[k]
	if hasDoc {
		baseExists = true
	}
	n := &Change{Path: k, BaseHash: ch.BaseHash, From: from, Mode: mode}
	switch {
	case !exists && !baseExists:
		delete(c.changes, k) // created then deleted: nothing pending
		delete(c.baseDoc, k)
		return nil
	case !exists:
		n.Op, n.Mode = OpDelete, 0
	case baseExists:
		n.Op, n.Content = OpModify, bytes.Clone(data)
		if from == "" && mode == ch.Mode && hasDoc && bytes.Equal(data, c.baseDoc[k]) {
			delete(c.changes, k) // back to the base
			delete(c.baseDoc, k)
			return nil
		}
	default:
		n.Op, n.Content = OpCreate, bytes.Clone(data)
	}
	if n.Op != OpDelete && n.Content == nil {
		n.Content = []byte{}
	}
	if n.Mode == 0 && n.Op != OpDelete {
		n.Mode = ch.Mode
		if n.Mode == 0 {
			n.Mode = defaultMode
		}
	}
	c.changes[k] = n
	return nil
}

// WriteFile replaces (or creates) a file's pending content.
func (c *ChangeSet) WriteFile(rel string, data []byte) error {
	k, abs, err := c.key(rel)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, mode, _, err := c.current(k, abs)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return c.set(k, abs, data, mode, true, "")
}

// Edit replaces old with new in a file: exactly once, or every occurrence
// when replaceAll. When old does not occur exactly, the whitespace ladder
// (ladder.go) may find the one place it means; copied read_file line
// numbers are dropped first. Zero or several occurrences (without
// replaceAll) are a *MatchError saying where to look; old == new is an
// error, as nothing would change.
func (c *ChangeSet) Edit(rel, old, new string, replaceAll bool) (Edited, error) {
	if old == "" {
		return Edited{}, fmt.Errorf("edit %s: old text is empty", rel)
	}
	if old == new {
		return Edited{}, fmt.Errorf("edit %s: old and new are the same text: nothing would change", rel)
	}
	k, abs, err := c.key(rel)
	if err != nil {
		return Edited{}, fmt.Errorf("edit %s: %w", rel, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	data, mode, ok, err := c.current(k, abs)
	if err != nil {
		return Edited{}, fmt.Errorf("edit %s: %w", rel, err)
	}
	if !ok {
		return Edited{}, fmt.Errorf("edit %s: %w", k, fs.ErrNotExist)
	}
	out, e, err := editText(k, data, old, new, replaceAll)
	if err != nil {
		return Edited{}, err
	}
	return e, c.set(k, abs, out, mode, true, c.fromOf(k))
}

// fromOf keeps a pending rename's source when its target is edited.
func (c *ChangeSet) fromOf(k string) string {
	if ch, ok := c.changes[k]; ok {
		return ch.From
	}
	return ""
}

// Delete removes a file.
func (c *ChangeSet) Delete(rel string) error {
	k, abs, err := c.key(rel)
	if err != nil {
		return fmt.Errorf("delete %s: %w", rel, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, ok, err := c.current(k, abs)
	if err != nil {
		return fmt.Errorf("delete %s: %w", rel, err)
	}
	if !ok {
		return fmt.Errorf("delete %s: %w", k, fs.ErrNotExist)
	}
	return c.set(k, abs, nil, 0, false, "")
}

// Rename moves a file; the target must not exist.
func (c *ChangeSet) Rename(from, to string) error {
	kf, absf, err := c.key(from)
	if err != nil {
		return fmt.Errorf("rename %s: %w", from, err)
	}
	kt, abst, err := c.key(to)
	if err != nil {
		return fmt.Errorf("rename to %s: %w", to, err)
	}
	if kf == kt {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	data, mode, ok, err := c.current(kf, absf)
	if err != nil {
		return fmt.Errorf("rename %s: %w", from, err)
	}
	if !ok {
		return fmt.Errorf("rename %s: %w", kf, fs.ErrNotExist)
	}
	if _, _, exists, err := c.current(kt, abst); err != nil || exists {
		if err == nil {
			err = fs.ErrExist
		}
		return fmt.Errorf("rename to %s: %w", kt, err)
	}
	src := kf
	if ch, ok := c.changes[kf]; ok && ch.From != "" {
		src = ch.From // a rename of a rename keeps the original source
	}
	if err := c.set(kt, abst, data, mode, true, src); err != nil {
		return err
	}
	return c.set(kf, absf, nil, 0, false, "")
}

// hostless drops the host path an *fs.PathError carries: a message for
// the model names workspace paths only.
func hostless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ListDir lists a directory as the change set sees it, sorted by name.
func (c *ChangeSet) ListDir(rel string) ([]DirEntry, error) {
	abs, err := c.root.Resolve(rel)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", rel, err)
	}
	k, err := c.root.Rel(abs)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", rel, err)
	}
	entries := map[string]DirEntry{}
	des, derr := os.ReadDir(abs)
	if derr != nil && !errors.Is(derr, fs.ErrNotExist) {
		return nil, fmt.Errorf("list %s: %w", k, hostless(derr))
	}
	for _, d := range des {
		e := DirEntry{Name: d.Name(), IsDir: d.IsDir()}
		if fi, err := d.Info(); err == nil && !e.IsDir {
			e.Size = fi.Size()
		}
		entries[e.Name] = e
	}
	prefix := k + "/"
	if k == "." {
		prefix = ""
	}
	c.mu.RLock()
	for p, ch := range c.changes {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		rest := p[len(prefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if ch.Op != OpDelete {
				entries[rest[:i]] = DirEntry{Name: rest[:i], IsDir: true}
			}
			continue
		}
		if ch.Op == OpDelete {
			delete(entries, rest)
		} else {
			entries[rest] = DirEntry{Name: rest, Size: int64(len(ch.Content))}
		}
	}
	c.mu.RUnlock()
	if derr != nil && len(entries) == 0 {
		return nil, fmt.Errorf("list %s: %w", k, hostless(derr))
	}
	out := make([]DirEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// view snapshots the pending state for a search.
func (c *ChangeSet) view() *view {
	ov := overlay{files: c.root.documents(), deleted: map[string]bool{}}
	if ov.files == nil {
		ov.files = map[string][]byte{}
	}
	c.mu.RLock()
	for p, ch := range c.changes {
		if ch.Op == OpDelete {
			ov.deleted[p] = true
			delete(ov.files, p)
		} else {
			ov.files[p] = ch.Content
		}
	}
	c.mu.RUnlock()
	return &view{root: c.root, ov: ov}
}

// Grep searches the pending state.
func (c *ChangeSet) Grep(ctx context.Context, o GrepOptions) ([]Match, error) {
	ms, _, err := c.view().grep(ctx, o)
	return ms, err
}

// GrepCount is Grep that also says how many matches it found: exactly
// len(ms) under o.Max, else at least o.Max+1 when more were there (a
// lower bound: each file is searched up to o.Max).
func (c *ChangeSet) GrepCount(ctx context.Context, o GrepOptions) (ms []Match, total int, _ error) {
	return c.view().grep(ctx, o)
}

// Find lists the pending state's files matching a ** glob.
func (c *ChangeSet) Find(ctx context.Context, glob string) ([]string, error) {
	return c.view().find(ctx, glob)
}

// Changes returns the pending changes sorted by path (copies).
func (c *ChangeSet) Changes() []Change {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Change, 0, len(c.changes))
	for _, ch := range c.changes {
		cp := *ch
		cp.Content = bytes.Clone(ch.Content)
		out = append(out, cp)
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Len is the number of pending file changes.
func (c *ChangeSet) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.changes)
}

// Base returns the content a changed file was based on; false when the
// file is unchanged or did not exist.
func (c *ChangeSet) Base(rel string) ([]byte, bool) {
	k, err := CleanPath(rel)
	if err != nil {
		return nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	b, ok := c.baseDoc[k]
	return bytes.Clone(b), ok
}

// BaseHashes returns the sha256 hex recorded for every file read or
// changed through the change set ("" for a file that did not exist).
func (c *ChangeSet) BaseHashes() map[string]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m := make(map[string]string, len(c.bases))
	for k, v := range c.bases {
		m[k] = v
	}
	return m
}
