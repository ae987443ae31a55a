package lsp

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/review"
)

// TestTextEditsPerHunk: the edit builder sends one TextEdit per hunk of
// the workspace's line diff, exactly the changed lines (issue 13 item 1).
func TestTextEditsPerHunk(t *testing.T) {
	type edit struct {
		sl, sc, el, ec uint32
		text           string
	}
	const mean = "package stats\n\nfunc Mean(xs []float64) float64 {\n\tsum := 0.0\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum / float64(len(xs)-1)\n}\n"
	tests := []struct {
		name     string
		old, new string
		want     []edit
	}{
		{name: "one line: that line only, not the closing brace",
			old: mean, new: strings.Replace(mean, "len(xs)-1", "len(xs)", 1),
			want: []edit{{7, 0, 8, 0, "\treturn sum / float64(len(xs))\n"}}},
		{name: "two lines far apart: two edits",
			old: mean, new: strings.Replace(strings.Replace(mean, "package stats", "package stat", 1), "len(xs)-1", "len(xs)", 1),
			want: []edit{{0, 0, 1, 0, "package stat\n"}, {7, 0, 8, 0, "\treturn sum / float64(len(xs))\n"}}},
		{name: "crlf",
			old: "a\r\nb\r\nc\r\n", new: "a\r\nB\r\nc\r\n",
			want: []edit{{1, 0, 2, 0, "B\r\n"}}},
		{name: "no trailing newline: last line changed",
			old: "a\nb\nlast", new: "a\nb\nLAST",
			want: []edit{{2, 0, 2, 4, "LAST"}}},
		{name: "no trailing newline: newline added",
			old: "a\nb", new: "a\nb\n",
			want: []edit{{1, 0, 1, 1, "b\n"}}},
		{name: "emoji: UTF-16 columns at the end of a line without newline",
			old: "x := \"😀\"\nend 😀😀", new: "x := \"😀\"\nend 😀",
			want: []edit{{1, 0, 1, 8, "end 😀"}}},
		{name: "emoji line replaced in the middle",
			old: "a\n😀 b\nc\n", new: "a\n😀 B\nc\n",
			want: []edit{{1, 0, 2, 0, "😀 B\n"}}},
		{name: "insertion at start",
			old: "a\nb\n", new: "// head\na\nb\n",
			want: []edit{{0, 0, 0, 0, "// head\n"}}},
		{name: "insertion at end",
			old: "a\nb\n", new: "a\nb\nc\n",
			want: []edit{{2, 0, 2, 0, "c\n"}}},
		{name: "insertion at end of a file without newline",
			old: "a\nb", new: "a\nb\nc",
			want: []edit{{1, 0, 1, 1, "b\nc"}}},
		{name: "deletion",
			old: "a\nb\nc\nd\n", new: "a\nd\n",
			want: []edit{{1, 0, 3, 0, ""}}},
		{name: "deletion of the last line",
			old: "a\nb\n", new: "a\n",
			want: []edit{{1, 0, 2, 0, ""}}},
		{name: "from empty",
			old: "", new: "hello\n",
			want: []edit{{0, 0, 0, 0, "hello\n"}}},
		{name: "equal", old: "same\n", new: "same\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tes, changed := textEdits([]byte(tt.old), []byte(tt.new), "")
			if len(tes) != len(tt.want) || len(changed) != len(tt.want) {
				t.Fatalf("got %d edits (%d ranges), want %d: %+v", len(tes), len(changed), len(tt.want), tes)
			}
			for i, e := range tes {
				te := e.(*protocol.TextEdit)
				w := tt.want[i]
				got := edit{te.Range.Start.Line, te.Range.Start.Character, te.Range.End.Line, te.Range.End.Character, te.NewText}
				if got != w {
					t.Errorf("edit %d = %+v, want %+v", i, got, w)
				}
			}
			// Applied to the old text (back to front), the edits give the new.
			text := []byte(tt.old)
			for i := len(tes) - 1; i >= 0; i-- {
				te := tes[i].(*protocol.TextEdit)
				starts := lineStarts(text)
				a, b := offsetOf(text, starts, te.Range.Start), offsetOf(text, starts, te.Range.End)
				text = append(append(append([]byte(nil), text[:a]...), te.NewText...), text[b:]...)
			}
			if string(text) != tt.new {
				t.Fatalf("edits applied give %q, want %q", text, tt.new)
			}
		})
	}
}

// TestTextEditsAnnotated: with an annotation every hunk carries it.
func TestTextEditsAnnotated(t *testing.T) {
	tes, _ := textEdits([]byte("1\n2\n3\n4\n5\n6\n"), []byte("X\n2\n3\n4\n5\nY\n"), annotationID(review.Implementation))
	if len(tes) != 2 {
		t.Fatalf("got %d edits, want 2", len(tes))
	}
	for i, e := range tes {
		ae, ok := e.(*protocol.AnnotatedTextEdit)
		if !ok || ae.AnnotationID != annotationID(review.Implementation) {
			t.Fatalf("edit %d = %#v, want annotated %s", i, e, annotationID(review.Implementation))
		}
	}
}
