package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
)

// wireVersion is the serialised change set's format version.
const wireVersion = 1

// wireChange is a Change as serialised ([]byte content is base64 in JSON).
type wireChange struct {
	Path     string      `json:"path"`
	Op       Op          `json:"op"`
	From     string      `json:"from,omitempty"`
	Content  []byte      `json:"content,omitempty"`
	Mode     fs.FileMode `json:"mode,omitempty"`
	BaseHash string      `json:"base_hash,omitempty"`
	Base     []byte      `json:"base,omitempty"` // base content of a modified or deleted file
	// Holes and BaseHoles say where a Sealer put placeholders for secrets
	// in Content and Base.
	Holes     []Hole `json:"holes,omitempty"`
	BaseHoles []Hole `json:"base_holes,omitempty"`
	// BaseOnDisk: the base is not stored, only its hash, because the
	// workspace held it when the set was serialised; it is read back from
	// there.
	BaseOnDisk bool `json:"base_on_disk,omitempty"`
}

// Hole is a placeholder a Sealer put in place of a secret: Off is its byte
// offset in the sealed content, Name the secret it stands for.
type Hole struct {
	Off  int    `json:"off"`
	Name string `json:"name"`
}

// Sealer keeps secrets out of a serialised change set. Seal returns data
// with every secret replaced by a placeholder and the holes it made, in
// increasing offset; Open puts the secrets back, failing when one cannot
// be had.
type Sealer interface {
	Seal(data []byte) ([]byte, []Hole)
	Open(data []byte, holes []Hole) ([]byte, error)
}

// seal applies s to content (no sealer: unchanged).
func seal(s Sealer, b []byte) ([]byte, []Hole) {
	if s == nil || b == nil {
		return b, nil
	}
	out, holes := s.Seal(b)
	if len(holes) == 0 {
		return b, nil
	}
	return out, holes
}

// unseal reverses seal.
func unseal(s Sealer, path string, b []byte, holes []Hole) ([]byte, error) {
	if len(holes) == 0 {
		return b, nil
	}
	if s == nil {
		return nil, fmt.Errorf("unmarshal change set: %s holds sealed secrets and no sealer was given", path)
	}
	out, err := s.Open(b, holes)
	if err != nil {
		return nil, fmt.Errorf("unmarshal change set: %s: %w", path, err)
	}
	return out, nil
}

type wireSet struct {
	Version int               `json:"version"`
	Changes []wireChange      `json:"changes"`
	Reads   map[string]string `json:"reads,omitempty"` // base hashes of files read or changed
	Origin  []wireChange      `json:"origin,omitempty"`
}

// Marshal serialises the change set (pending changes, base contents and
// hashes) for the trace and for resume; UnmarshalChangeSet restores it
// exactly.
func (c *ChangeSet) Marshal() ([]byte, error) { return c.MarshalSealed(nil) }

// MarshalSealed is Marshal with every content and base passed through s,
// so secrets in the files never reach the serialised form;
// UnmarshalSealed with a sealer that finds the same secrets restores it.
func (c *ChangeSet) MarshalSealed(s Sealer) ([]byte, error) { return c.marshal(s, false) }

// marshal is MarshalSealed; keepBases stores every base's content, also
// of bases the workspace still holds (MarshalWithBases).
func (c *ChangeSet) marshal(s Sealer, keepBases bool) ([]byte, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	w := wireSet{Version: wireVersion, Changes: []wireChange{}, Reads: c.bases}
	for _, k := range sortedKeys(c.changes) {
		ch := c.changes[k]
		content, holes := seal(s, ch.Content)
		wc := wireChange{Path: k, Op: ch.Op, From: ch.From, Content: content, Mode: ch.Mode, BaseHash: ch.BaseHash, Holes: holes}
		if b, ok := c.baseDoc[k]; ok {
			if !keepBases && c.baseOnDisk(k, ch.BaseHash) {
				wc.BaseOnDisk = true
			} else {
				wc.Base, wc.BaseHoles = seal(s, b)
				if wc.Base == nil {
					wc.Base = []byte{}
				}
			}
		}
		w.Changes = append(w.Changes, wc)
	}
	for _, k := range sortedKeys(c.origin) {
		ch := c.origin[k]
		content, holes := seal(s, ch.Content)
		w.Origin = append(w.Origin, wireChange{Path: k, Op: ch.Op, From: ch.From, Content: content, Mode: ch.Mode, BaseHash: ch.BaseHash, Holes: holes})
	}
	data, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("marshal change set: %w", err)
	}
	return data, nil
}

// baseOnDisk reports whether the workspace still holds the base of k,
// so a snapshot need only keep its hash. Callers hold c.mu.
func (c *ChangeSet) baseOnDisk(k, hash string) bool {
	if hash == "" {
		return false
	}
	data, err := c.root.ReadFile(k)
	return err == nil && hashOf(data) == hash
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// UnmarshalChangeSet restores a change set serialised by Marshal over r.
// Every path is checked against r's confinement.
func UnmarshalChangeSet(r *Root, data []byte) (*ChangeSet, error) {
	return UnmarshalSealed(r, data, nil)
}

// UnmarshalSealed restores a change set serialised by MarshalSealed,
// opening its sealed contents with s (nil: a sealed content is an error).
// A base whose restored content does not match its recorded hash (a
// secret that changed since) is an error.
func UnmarshalSealed(r *Root, data []byte, s Sealer) (*ChangeSet, error) {
	var w wireSet
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("unmarshal change set: %w", err)
	}
	if w.Version != wireVersion {
		return nil, fmt.Errorf("unmarshal change set: unsupported version %d", w.Version)
	}
	c := NewChangeSet(r)
	load := func(wc wireChange) (*Change, error) {
		k, err := CleanPath(wc.Path)
		if err != nil || k != wc.Path || k == "." {
			return nil, fmt.Errorf("unmarshal change set: bad path %q", wc.Path)
		}
		switch wc.Op {
		case OpCreate, OpModify, OpDelete:
		default:
			return nil, fmt.Errorf("unmarshal change set: %s: bad op %q", wc.Path, wc.Op)
		}
		if wc.From != "" {
			if f, err := CleanPath(wc.From); err != nil || f != wc.From {
				return nil, fmt.Errorf("unmarshal change set: bad rename source %q", wc.From)
			}
		}
		if _, err := r.Resolve(k); err != nil {
			return nil, fmt.Errorf("unmarshal change set: %w", err)
		}
		content, err := unseal(s, k, wc.Content, wc.Holes)
		if err != nil {
			return nil, err
		}
		return &Change{Path: k, Op: wc.Op, From: wc.From, Content: content, Mode: wc.Mode, BaseHash: wc.BaseHash}, nil
	}
	for _, wc := range w.Changes {
		ch, err := load(wc)
		if err != nil {
			return nil, err
		}
		if _, dup := c.changes[ch.Path]; dup {
			return nil, fmt.Errorf("unmarshal change set: %s listed twice", ch.Path)
		}
		if ch.Op != OpDelete && ch.Content == nil {
			ch.Content = []byte{}
		}
		c.changes[ch.Path] = ch
		if wc.BaseOnDisk {
			if wc.Base != nil || ch.BaseHash == "" {
				return nil, fmt.Errorf("unmarshal change set: %s: a base both stored and on disk", ch.Path)
			}
			// The workspace held the base when the set was saved. If it
			// has changed since, its content stands in as the base (what
			// applying would replace) and the hash, kept, makes Apply
			// report the conflict; a file gone since has no base.
			if data, err := r.ReadFile(ch.Path); err == nil {
				c.baseDoc[ch.Path] = data
			}
			continue
		}
		if wc.Base != nil || ch.Op != OpCreate {
			if wc.Base == nil {
				wc.Base = []byte{}
			}
			if wc.Base, err = unseal(s, ch.Path, wc.Base, wc.BaseHoles); err != nil {
				return nil, err
			}
			if hashOf(wc.Base) != ch.BaseHash {
				if len(wc.BaseHoles) > 0 {
					return nil, fmt.Errorf("unmarshal change set: %s: base content does not match its hash: a secret it holds (%s) has a different value now", ch.Path, wc.BaseHoles[0].Name)
				}
				return nil, fmt.Errorf("unmarshal change set: %s: base content does not match its hash", ch.Path)
			}
			c.baseDoc[ch.Path] = wc.Base
		}
	}
	for k, h := range w.Reads {
		c.bases[k] = h
	}
	if w.Origin != nil {
		c.origin = map[string]*Change{}
		for _, wc := range w.Origin {
			ch, err := load(wc)
			if err != nil {
				return nil, err
			}
			c.origin[ch.Path] = ch
		}
	}
	return c, nil
}

// Fingerprint is a stable hash of the pending state (paths, ops, rename
// sources, modes and contents), equal for equal states; reads do not
// change it. Used for stall detection.
func (c *ChangeSet) Fingerprint() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, k := range sortedKeys(c.changes) {
		ch := c.changes[k]
		field([]byte(k))
		field([]byte(ch.Op))
		field([]byte(ch.From))
		binary.BigEndian.PutUint64(n[:], uint64(ch.Mode))
		h.Write(n[:])
		field(ch.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Clone returns an independent copy; Merge of the copy back into c later
// detects files both changed differently since the clone.
func (c *ChangeSet) Clone() *ChangeSet {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := NewChangeSet(c.root)
	n.origin = map[string]*Change{}
	for k, ch := range c.changes {
		n.changes[k] = ch // stored changes are never mutated
		n.origin[k] = ch
	}
	for k, v := range c.bases {
		n.bases[k] = v
	}
	for k, v := range c.baseDoc {
		n.baseDoc[k] = v
	}
	return n
}

// Merge folds a child change set (usually a Clone of c) into c. A file
// the child changed that c also changed differently since the clone is a
// conflict: Merge then returns a *ConflictError naming every such file
// and changes nothing.
func (c *ChangeSet) Merge(child *ChangeSet) error {
	if child == c {
		return nil
	}
	if child.root.Dir() != c.root.Dir() {
		return fmt.Errorf("merge: child works on %s, not %s", child.root.Dir(), c.root.Dir())
	}
	child.mu.RLock()
	cc := make(map[string]*Change, len(child.changes))
	for k, v := range child.changes {
		cc[k] = v
	}
	origin := child.origin
	cBases := make(map[string]string, len(child.bases))
	for k, v := range child.bases {
		cBases[k] = v
	}
	cDocs := make(map[string][]byte, len(child.baseDoc))
	for k, v := range child.baseDoc {
		cDocs[k] = v
	}
	child.mu.RUnlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	touched := map[string]bool{}
	for k, ch := range cc {
		if !ch.same(origin[k]) {
			touched[k] = true
		}
	}
	for k := range origin {
		if _, ok := cc[k]; !ok {
			touched[k] = true // the child reverted it
		}
	}
	var conflicts []string
	for k := range touched {
		mine, theirs := c.changes[k], cc[k]
		if !mine.same(origin[k]) && !mine.same(theirs) {
			conflicts = append(conflicts, k)
		}
	}
	if len(conflicts) > 0 {
		slices.Sort(conflicts)
		return &ConflictError{Files: conflicts}
	}
	for k := range touched {
		if ch, ok := cc[k]; ok {
			c.changes[k] = ch
			if d, ok := cDocs[k]; ok {
				c.baseDoc[k] = d
			}
		} else {
			delete(c.changes, k)
			delete(c.baseDoc, k)
		}
	}
	for k, v := range cBases {
		if _, ok := c.bases[k]; !ok {
			c.bases[k] = v
		}
	}
	return nil
}
