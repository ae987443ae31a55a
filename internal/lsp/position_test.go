package lsp

import (
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"
)

func TestPositionConversions(t *testing.T) {
	text := []byte("ab\né😀x\n\nlast")
	tests := []struct {
		off  int
		want protocol.Position
	}{
		{0, protocol.Position{Line: 0, Character: 0}},
		{2, protocol.Position{Line: 0, Character: 2}},
		{3, protocol.Position{Line: 1, Character: 0}},
		{5, protocol.Position{Line: 1, Character: 1}},  // after é (2 bytes, 1 unit)
		{9, protocol.Position{Line: 1, Character: 3}},  // after 😀 (4 bytes, 2 units)
		{10, protocol.Position{Line: 1, Character: 4}}, // after x
		{12, protocol.Position{Line: 3, Character: 0}},
		{16, protocol.Position{Line: 3, Character: 4}},
	}
	starts := lineStarts(text)
	for _, tt := range tests {
		got := positionOf(text, starts, tt.off)
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("positionOf(%d) (-got +want):\n%s", tt.off, diff)
		}
		if back := offsetOf(text, starts, tt.want); back != tt.off {
			t.Errorf("offsetOf(%v) = %d, want %d", tt.want, back, tt.off)
		}
	}
	// Past the end of a line clamps to its end; past the last line to the
	// end of the text.
	if got := offsetOf(text, starts, protocol.Position{Line: 0, Character: 99}); got != 2 {
		t.Errorf("clamp to line end = %d, want 2", got)
	}
	if got := offsetOf(text, starts, protocol.Position{Line: 99}); got != len(text) {
		t.Errorf("clamp to text end = %d, want %d", got, len(text))
	}
}

// FuzzPositionRoundTrip: every rune boundary maps to a position and back.
func FuzzPositionRoundTrip(f *testing.F) {
	f.Add("ab\né😀x\n\nlast", 5)
	f.Add("", 0)
	f.Add("\r\n\t", 2)
	f.Fuzz(func(t *testing.T, s string, off int) {
		text := []byte(s)
		if off < 0 || off > len(text) {
			return
		}
		for off > 0 && off < len(text) && !utf8.RuneStart(text[off]) {
			off--
		}
		if !utf8.Valid(text) {
			return
		}
		starts := lineStarts(text)
		p := positionOf(text, starts, off)
		if back := offsetOf(text, starts, p); back != off {
			t.Fatalf("offset %d → %v → %d in %q", off, p, back, s)
		}
	})
}
