package workspace

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLineHunks(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []Hunk
	}{
		{"equal", "a\nb\n", "a\nb\n", nil},
		{"one line changed", "a\nb\nc\n}\n", "a\nB\nc\n}\n", []Hunk{{1, 2, 1, 2}}},
		{"two far apart", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\nX\n3\n4\n5\n6\nY\n8\n", []Hunk{{1, 2, 1, 2}, {6, 7, 6, 7}}},
		{"insert at start", "a\nb\n", "new\na\nb\n", []Hunk{{0, 0, 0, 1}}},
		{"insert at end", "a\nb\n", "a\nb\nc\n", []Hunk{{2, 2, 2, 3}}},
		{"delete middle", "a\nb\nc\n", "a\nc\n", []Hunk{{1, 2, 1, 1}}},
		{"no trailing newline added", "a\nb", "a\nb\n", []Hunk{{1, 2, 1, 2}}},
		{"crlf line", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n", []Hunk{{1, 2, 1, 2}}},
		{"from empty", "", "a\n", []Hunk{{0, 0, 0, 1}}},
		{"to empty", "a\nb\n", "", []Hunk{{0, 2, 0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LineHunks([]byte(tt.old), []byte(tt.new))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("LineHunks(%q, %q) = %v, want %v", tt.old, tt.new, got, tt.want)
			}
			// Applying the hunks to old gives new.
			ol, nl := Lines([]byte(tt.old)), Lines([]byte(tt.new))
			var out []string
			pos := 0
			for _, h := range got {
				out = append(out, ol[pos:h.A0]...)
				out = append(out, nl[h.B0:h.B1]...)
				pos = h.A1
			}
			out = append(out, ol[pos:]...)
			if s := strings.Join(out, ""); s != tt.new {
				t.Fatalf("hunks applied give %q, want %q", s, tt.new)
			}
		})
	}
}

func TestMerge3(t *testing.T) {
	const base = "func Mean(xs []float64) float64 {\n\tsum := 0.0\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum / float64(len(xs)-1)\n}\n"
	tests := []struct {
		name           string
		base, ours     string
		theirs         string
		want           string
		conflict       bool
		conflictOurs   []string
		conflictTheirs []string
		oursLine       int
	}{
		{name: "user edits far from the agent",
			base:   base,
			ours:   "// Mean averages.\n" + base,
			theirs: strings.Replace(base, "len(xs)-1", "len(xs)", 1),
			want:   "// Mean averages.\n" + strings.Replace(base, "len(xs)-1", "len(xs)", 1)},
		{name: "adjacent lines do not conflict",
			base: "a\nb\nc\n", ours: "A\nb\nc\n", theirs: "a\nB\nc\n", want: "A\nB\nc\n"},
		{name: "same change on both sides",
			base: "a\nb\nc\n", ours: "a\nX\nc\n", theirs: "a\nX\nc\n", want: "a\nX\nc\n"},
		{name: "only ours changed",
			base: "a\nb\n", ours: "a\nb\nc\n", theirs: "a\nb\n", want: "a\nb\nc\n"},
		{name: "insert before a replaced line",
			base: "a\nb\nc\n", ours: "a\nnew\nb\nc\n", theirs: "a\nB\nc\n", want: "a\nnew\nB\nc\n"},
		{name: "agent deletes, user appends at the end",
			base: "a\nb\nc\n", ours: "a\nb\nc\nd\n", theirs: "a\nc\n", want: "a\nc\nd\n"},
		{name: "crlf",
			base: "a\r\nb\r\nc\r\nd\r\n", ours: "a\r\nb\r\nc\r\nD\r\n", theirs: "A\r\nb\r\nc\r\nd\r\n", want: "A\r\nb\r\nc\r\nD\r\n"},
		{name: "no trailing newline, user edits the last line",
			base: "a\nb\nc", ours: "a\nb\nC", theirs: "X\nb\nc", want: "X\nb\nC"},
		{name: "same line changed differently",
			base: base, ours: strings.Replace(base, "len(xs)-1", "len(xs)-2", 1), theirs: strings.Replace(base, "len(xs)-1", "len(xs)", 1),
			conflict: true, oursLine: 5,
			conflictOurs:   []string{"\treturn sum / float64(len(xs)-2)\n"},
			conflictTheirs: []string{"\treturn sum / float64(len(xs))\n"}},
		{name: "both insert at the same place",
			base: "a\nb\n", ours: "a\nX\nb\n", theirs: "a\nY\nb\n", conflict: true, oursLine: 1,
			conflictOurs: []string{"X\n"}, conflictTheirs: []string{"Y\n"}},
		{name: "insertion strictly inside a replaced block",
			base: "a\nb\nc\nd\n", ours: "a\nb\nX\nc\nd\n", theirs: "a\nB\nC\nd\n", conflict: true, oursLine: 1,
			conflictOurs: []string{"b\n", "X\n", "c\n"}, conflictTheirs: []string{"B\n", "C\n"}},
		{name: "conflict after a shift names the user's line",
			base: "a\nb\nc\n", ours: "0\n1\na\nb\nZ\n", theirs: "a\nb\nY\n", conflict: true, oursLine: 4,
			conflictOurs: []string{"Z\n"}, conflictTheirs: []string{"Y\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, conflicts := Merge3([]byte(tt.base), []byte(tt.ours), []byte(tt.theirs))
			if tt.conflict {
				if got != nil || len(conflicts) != 1 {
					t.Fatalf("want one conflict and no text, got %q and %+v", got, conflicts)
				}
				c := conflicts[0]
				if c.Ours0 != tt.oursLine || !reflect.DeepEqual(c.Ours, tt.conflictOurs) || !reflect.DeepEqual(c.Theirs, tt.conflictTheirs) {
					t.Fatalf("conflict = %+v, want ours at line %d %q, theirs %q", c, tt.oursLine, tt.conflictOurs, tt.conflictTheirs)
				}
				return
			}
			if len(conflicts) != 0 {
				t.Fatalf("unexpected conflicts %+v", conflicts)
			}
			if string(got) != tt.want {
				t.Fatalf("Merge3 = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRebase: a change whose file the user edited is carried onto the
// user's text when the edits do not overlap (its base becomes the user's
// text, so it no longer conflicts); overlapping edits, and a changed file
// that was deleted, are conflicts.
func TestRebase(t *testing.T) {
	const orig = "line 1\nline 2\nline 3\nline 4\nline 5\n"
	tests := []struct {
		name     string
		user     func(t *testing.T, dir string)
		want     string // merged content of a.txt; "" when a conflict
		conflict string // the conflict's reason, or "hunks"
	}{
		{name: "untouched", user: func(*testing.T, string) {}, want: "line 1\nline 2\nline 3\nline 4\nLINE 5\n"},
		{name: "user edits another line", user: func(t *testing.T, dir string) {
			writeTestFile(t, dir, "a.txt", "line 1 (user)\nline 2\nline 3\nline 4\nline 5\n")
		}, want: "line 1 (user)\nline 2\nline 3\nline 4\nLINE 5\n"},
		{name: "user edits the same line", user: func(t *testing.T, dir string) {
			writeTestFile(t, dir, "a.txt", "line 1\nline 2\nline 3\nline 4\nline five\n")
		}, conflict: "hunks"},
		{name: "user deletes the file", user: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
				t.Fatal(err)
			}
		}, conflict: "deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTestFile(t, dir, "a.txt", orig)
			writeTestFile(t, dir, "b.txt", "b\n")
			r, err := NewRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			cs := NewChangeSet(r)
			if _, err := cs.Edit("a.txt", "line 5", "LINE 5", false); err != nil {
				t.Fatal(err)
			}
			if err := cs.WriteFile("new.txt", []byte("new\n")); err != nil {
				t.Fatal(err)
			}
			tt.user(t, dir)
			n, rebased, conflicts, err := cs.Rebase()
			if err != nil {
				t.Fatal(err)
			}
			if tt.conflict != "" {
				if n != nil || len(conflicts) != 1 || conflicts[0].Path != "a.txt" {
					t.Fatalf("want one conflict on a.txt, got %v %+v", n, conflicts)
				}
				c := conflicts[0]
				if tt.conflict == "hunks" {
					if len(c.Hunks) != 1 || c.Hunks[0].Ours0 != 4 || c.Hunks[0].Ours[0] != "line five\n" || c.Hunks[0].Theirs[0] != "LINE 5\n" {
						t.Fatalf("conflict = %+v", c)
					}
				} else if !strings.Contains(c.Reason, tt.conflict) {
					t.Fatalf("reason %q, want %q", c.Reason, tt.conflict)
				}
				return
			}
			if len(conflicts) != 0 {
				t.Fatalf("conflicts %+v", conflicts)
			}
			got, err := n.ReadFile("a.txt")
			if err != nil || string(got) != tt.want {
				t.Fatalf("a.txt = %q (%v), want %q", got, err, tt.want)
			}
			if nw, _ := n.ReadFile("new.txt"); string(nw) != "new\n" || n.Len() != 2 {
				t.Fatalf("new.txt = %q, %d changes", nw, n.Len())
			}
			if c, err := n.Conflicts(); err != nil || len(c) != 0 {
				t.Fatalf("rebased change set still conflicts: %v %v", c, err)
			}
			if old, _ := cs.Conflicts(); (len(rebased) > 0) != (len(old) > 0) {
				t.Fatalf("rebased %v, but the original conflicts on %v", rebased, old)
			}
			if err := n.Apply(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != tt.want {
				t.Fatalf("applied a.txt = %q", b)
			}
		})
	}
}

func writeTestFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMerge3Properties: on random small texts, a side that did not change
// yields the other side, identical sides merge to themselves, and a clean
// merge of edits that touch disjoint base lines contains both; nothing
// panics.
func TestMerge3Properties(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	text := func(n int) []byte {
		var b strings.Builder
		for range n {
			b.WriteString([]string{"a\n", "b\n", "c\n", "}\n", "\n", "a\r\n"}[rng.IntN(6)])
		}
		if rng.IntN(4) == 0 {
			b.WriteString("tail")
		}
		return []byte(b.String())
	}
	mutate := func(base []byte) []byte {
		lines := Lines(base)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(lines) + 1)
			switch rng.IntN(3) {
			case 0:
				lines = append(lines[:i], append([]string{"new\n"}, lines[i:]...)...)
			case 1:
				if i < len(lines) {
					lines = append(lines[:i], lines[i+1:]...)
				}
			default:
				if i < len(lines) {
					lines[i] = "changed\n"
				}
			}
		}
		return []byte(strings.Join(lines, ""))
	}
	for n := range 2000 {
		base := text(rng.IntN(12))
		ours, theirs := mutate(base), mutate(base)
		if got, c := Merge3(base, ours, base); len(c) != 0 || string(got) != string(ours) {
			t.Fatalf("#%d Merge3(base, ours, base) = %q %v, want ours %q (base %q)", n, got, c, ours, base)
		}
		if got, c := Merge3(base, base, theirs); len(c) != 0 || string(got) != string(theirs) {
			t.Fatalf("#%d Merge3(base, base, theirs) = %q %v, want theirs %q (base %q)", n, got, c, theirs, base)
		}
		if got, c := Merge3(base, ours, ours); len(c) != 0 || string(got) != string(ours) {
			t.Fatalf("#%d Merge3(base, x, x) = %q %v, want %q", n, got, c, ours)
		}
		got, c := Merge3(base, ours, theirs)
		if len(c) == 0 {
			// Every line either side added is in the result.
			for _, side := range [][]byte{ours, theirs} {
				for _, h := range LineHunks(base, side) {
					for _, l := range Lines(side)[h.B0:h.B1] {
						if !strings.Contains(string(got), l) {
							t.Fatalf("#%d merge %q lacks %q added by a side (base %q ours %q theirs %q)", n, got, l, base, ours, theirs)
						}
					}
				}
			}
		}
	}
}

// TestRebaseWithoutRecordedBase: a change set restored from a snapshot
// that kept only its base's hash, the file edited since, has the edited
// text as a stand-in base; merging against it would drop the user's
// edit, so Rebase refuses it. Control: the snapshot with its bases
// (MarshalWithBases) merges.
func TestRebaseWithoutRecordedBase(t *testing.T) {
	for _, withBases := range []bool{false, true} {
		dir := t.TempDir()
		writeTestFile(t, dir, "a.txt", "line 1\nline 2\nline 3\n")
		r, err := NewRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		cs := NewChangeSet(r)
		if _, err := cs.Edit("a.txt", "line 3", "LINE 3", false); err != nil {
			t.Fatal(err)
		}
		data, err := cs.MarshalSealed(nil)
		if withBases {
			data, err = cs.MarshalWithBases(nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, dir, "a.txt", "line 1 (user)\nline 2\nline 3\n")
		back, err := UnmarshalChangeSet(r, data)
		if err != nil {
			t.Fatal(err)
		}
		n, _, conflicts, err := back.Rebase()
		if err != nil {
			t.Fatal(err)
		}
		if !withBases {
			if n != nil || len(conflicts) != 1 || !strings.Contains(conflicts[0].Reason, "not recorded") {
				t.Errorf("hash-only snapshot: want a conflict saying the base was not recorded, got %v %+v", n, conflicts)
			}
			continue
		}
		if got, _ := n.ReadFile("a.txt"); string(got) != "line 1 (user)\nline 2\nLINE 3\n" {
			t.Errorf("with bases: a.txt = %q, want both edits", got)
		}
	}
}
