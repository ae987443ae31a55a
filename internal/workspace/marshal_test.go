package workspace

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarshalRoundTrip(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "a\n", "b.bin": "\x00\xff binary", "c.txt": "c\n"})
	c := NewChangeSet(r)
	for _, err := range []error{
		c.WriteFile("a.txt", []byte("A\n")),
		c.WriteFile("b.bin", []byte("\x00\x01\xfe")),
		c.Rename("c.txt", "d/c.txt"),
		c.WriteFile("empty.txt", nil),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ReadFile("a.txt"); err != nil {
		t.Fatal(err)
	}
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalChangeSet(r, data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(again), string(data)); diff != "" {
		t.Errorf("Marshal∘Unmarshal (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(back.Changes(), c.Changes()); diff != "" {
		t.Errorf("Changes (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(back.Diff(), c.Diff()); diff != "" {
		t.Errorf("Diff (-got +want):\n%s", diff)
	}
	if back.Fingerprint() != c.Fingerprint() {
		t.Error("fingerprints differ after a round trip")
	}
	if err := back.Apply(); err != nil {
		t.Fatalf("apply restored set: %v", err)
	}
	if got, _ := readDisk(t, r, "d/c.txt"); got != "c\n" {
		t.Errorf("renamed file = %q", got)
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	r := newTestRoot(t, nil)
	for _, in := range []string{
		``,
		`{}`,
		`{"version":2,"changes":[]}`,
		`{"version":1,"changes":[{"path":"../x","op":"create"}]}`,
		`{"version":1,"changes":[{"path":"/x","op":"create"}]}`,
		`{"version":1,"changes":[{"path":"x","op":"chmod"}]}`,
		`{"version":1,"changes":[{"path":"x","op":"modify","base_hash":"00","base":"YQ=="}]}`,
		`{"version":1,"changes":[{"path":"x","op":"create"},{"path":"x","op":"create"}]}`,
		`{"version":1,"changes":[],"extra":1}`,
	} {
		if _, err := UnmarshalChangeSet(r, []byte(in)); err == nil {
			t.Errorf("UnmarshalChangeSet(%s) succeeded", in)
		}
	}
}

func TestFingerprint(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "a\n"})
	c1, c2 := NewChangeSet(r), NewChangeSet(r)
	empty := c1.Fingerprint()
	if _, err := c1.ReadFile("a.txt"); err != nil {
		t.Fatal(err)
	}
	if c1.Fingerprint() != empty {
		t.Error("a read changed the fingerprint")
	}
	_ = c1.WriteFile("x", []byte("1"))
	_ = c1.WriteFile("y", []byte("2"))
	_ = c2.WriteFile("y", []byte("2"))
	_ = c2.WriteFile("x", []byte("1"))
	if c1.Fingerprint() != c2.Fingerprint() {
		t.Error("equal states, different fingerprints")
	}
	_ = c2.WriteFile("x", []byte("12"))
	if c1.Fingerprint() == c2.Fingerprint() {
		t.Error("different states, equal fingerprints")
	}
	// Length framing: ("x"="12") vs ("x1"="2") must differ.
	c3, c4 := NewChangeSet(r), NewChangeSet(r)
	_ = c3.WriteFile("x", []byte("12"))
	_ = c4.WriteFile("x1", []byte("2"))
	if c3.Fingerprint() == c4.Fingerprint() {
		t.Error("fingerprint is ambiguous")
	}
}

func TestCloneMerge(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	parent := NewChangeSet(r)
	_ = parent.WriteFile("a.txt", []byte("parent a\n"))
	child := parent.Clone()
	_ = child.WriteFile("b.txt", []byte("child b\n"))
	_ = child.WriteFile("new.txt", []byte("child new\n"))
	if parent.Len() != 1 {
		t.Fatalf("child writes leaked into the parent: %d", parent.Len())
	}
	// The parent changes an unrelated file meanwhile: no conflict.
	_ = parent.WriteFile("c.txt", []byte("parent c\n"))
	if err := parent.Merge(child); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"a.txt": "parent a\n", "b.txt": "child b\n", "c.txt": "parent c\n", "new.txt": "child new\n"} {
		got, err := parent.ReadFile(rel)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", rel, got, err, want)
		}
	}

	// Both change the same file differently: a conflict naming it, and
	// nothing merged.
	child2 := parent.Clone()
	_ = child2.WriteFile("a.txt", []byte("child2 a\n"))
	_ = child2.WriteFile("d.txt", []byte("d\n"))
	_ = parent.WriteFile("a.txt", []byte("parent a again\n"))
	before := parent.Fingerprint()
	err := parent.Merge(child2)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("Merge error %v, want *ConflictError", err)
	}
	if diff := cmp.Diff(ce.Files, []string{"a.txt"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if parent.Fingerprint() != before {
		t.Error("a conflicting merge changed the parent")
	}
	// The same change on both sides is not a conflict.
	child3 := parent.Clone()
	_ = child3.WriteFile("b.txt", []byte("same\n"))
	_ = parent.WriteFile("b.txt", []byte("same\n"))
	if err := parent.Merge(child3); err != nil {
		t.Errorf("identical change: %v", err)
	}
}

func TestChangeSetConcurrent(t *testing.T) {
	r := newTestRoot(t, map[string]string{"shared.txt": "0\n"})
	c := NewChangeSet(r)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := string(rune('a'+i)) + ".txt"
			for j := range 20 {
				_ = c.WriteFile(name, []byte{byte(j)})
				_, _ = c.ReadFile("shared.txt")
				_ = c.Fingerprint()
				_ = c.Diff()
				_, _ = c.Marshal()
			}
		}()
	}
	wg.Wait()
	if c.Len() != 8 {
		t.Errorf("Len = %d, want 8", c.Len())
	}
}

// upperSealer seals the word "SECRET" as "<S>" (a stand-in for the
// agent's environment sealer); open fails when told to.
type upperSealer struct{ fail bool }

func (upperSealer) Seal(b []byte) ([]byte, []Hole) {
	var out []byte
	var holes []Hole
	for i := 0; i < len(b); {
		if bytes.HasPrefix(b[i:], []byte("SECRET")) {
			holes = append(holes, Hole{Off: len(out), Name: "S"})
			out = append(out, "<S>"...)
			i += len("SECRET")
			continue
		}
		out = append(out, b[i])
		i++
	}
	return out, holes
}

func (s upperSealer) Open(b []byte, holes []Hole) ([]byte, error) {
	if s.fail {
		return nil, errors.New("secret S is gone")
	}
	return bytes.ReplaceAll(b, []byte("<S>"), []byte("SECRET")), nil
}

func TestMarshalSealed(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "key=SECRET\nport=1\n"})
	c := NewChangeSet(r)
	if err := c.WriteFile("a.txt", []byte("key=SECRET\nport=2\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile("b.txt", []byte("SECRET SECRET")); err != nil {
		t.Fatal(err)
	}
	data, err := c.MarshalSealed(upperSealer{})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := c.Marshal()
	enc := base64.StdEncoding.EncodeToString([]byte("key=SECRET"))
	if !bytes.Contains(plain, []byte(enc[:8])) {
		t.Fatal("control: the plain snapshot does not hold the secret in base64")
	}
	if bytes.Contains(data, []byte(enc[:8])) || bytes.Contains(data, []byte("SECRET")) {
		t.Errorf("sealed snapshot holds the secret: %s", data)
	}
	back, err := UnmarshalSealed(r, data, upperSealer{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(back.Changes(), c.Changes()); diff != "" {
		t.Errorf("restored (-got +want):\n%s", diff)
	}
	if _, err := UnmarshalSealed(r, data, upperSealer{fail: true}); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("open failure: %v", err)
	}
	if _, err := UnmarshalChangeSet(r, data); err == nil {
		t.Error("a sealed snapshot without a sealer: want an error")
	}
}

// A base the workspace still holds is stored as its hash only and read
// back from the disk; when the file changes on disk in between, the
// restored set still loads, diffs against what is there now, and Apply
// reports the conflict. A base the disk no longer holds at Marshal time
// is stored (control).
func TestMarshalKeepsOnlyTheHashOfABaseOnDisk(t *testing.T) {
	r := newTestRoot(t, map[string]string{"a.txt": "one\ntwo\n", "b.txt": "bee\n"})
	c := NewChangeSet(r)
	if err := c.WriteFile("a.txt", []byte("one\n2\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("b.txt"); err != nil {
		t.Fatal(err)
	}
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"base":`)) || bytes.Count(data, []byte(`"base_on_disk":true`)) != 2 {
		t.Fatalf("bases on disk were stored: %s", data)
	}
	back, err := UnmarshalChangeSet(r, data)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := back.Base("a.txt"); !ok || string(b) != "one\ntwo\n" {
		t.Errorf("restored base of a.txt = %q, %v", b, ok)
	}
	if back.Diff() != c.Diff() {
		t.Errorf("restored diff:\n%s\nwant:\n%s", back.Diff(), c.Diff())
	}

	// The file changes on disk: the set still restores; Apply refuses.
	if err := os.WriteFile(filepath.Join(r.Dir(), "a.txt"), []byte("one\nTWO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	moved, err := UnmarshalChangeSet(r, data)
	if err != nil {
		t.Fatalf("restore after the disk changed: %v", err)
	}
	if err := moved.Apply(); !errors.Is(err, ErrConflict) {
		t.Errorf("Apply over a changed base = %v, want a conflict", err)
	}

	// Control: marshalled now, the disk no longer holds the base, so it
	// is stored.
	data2, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data2, []byte(`"base":`)) {
		t.Errorf("a base the disk no longer holds was not stored: %s", data2)
	}
}
