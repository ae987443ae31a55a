package lsp

import (
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// Positions on the wire are (line, UTF-16 code unit); the rest of the
// program speaks byte offsets. These conversions are the only place the
// two meet.

// lineStarts returns the byte offset of the start of each line.
func lineStarts(text []byte) []int {
	starts := []int{0}
	for i, b := range text {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// offsetOf maps a protocol position to a byte offset in text, clamping a
// position past the end of a line to the line's end and past the last line
// to the end of the text (as clients expect).
func offsetOf(text []byte, starts []int, p protocol.Position) int {
	line := int(p.Line)
	if line >= len(starts) {
		return len(text)
	}
	off := starts[line]
	end := len(text)
	if line+1 < len(starts) {
		end = starts[line+1] - 1 // the '\n'
	}
	units := int(p.Character)
	for off < end && units > 0 {
		r, size := utf8.DecodeRune(text[off:end])
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		if n > units {
			break
		}
		units -= n
		off += size
	}
	return off
}

// positionOf maps a byte offset in text to a protocol position.
func positionOf(text []byte, starts []int, off int) protocol.Position {
	if off > len(text) {
		off = len(text)
	}
	if off < 0 {
		off = 0
	}
	// Binary search for the line containing off.
	lo, hi := 0, len(starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	var units uint32
	for i := starts[lo]; i < off; {
		r, size := utf8.DecodeRune(text[i:off])
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		units += uint32(n)
		i += size
	}
	return protocol.Position{Line: uint32(lo), Character: units}
}

// lineRange is the range covering 1-based line n of text (without its
// newline); a line past the end maps to the last position.
func lineRange(text []byte, n int) protocol.Range {
	starts := lineStarts(text)
	if n < 1 {
		n = 1
	}
	if n > len(starts) {
		p := positionOf(text, starts, len(text))
		return protocol.Range{Start: p, End: p}
	}
	start := starts[n-1]
	end := len(text)
	if n < len(starts) {
		end = starts[n] - 1
	}
	return protocol.Range{Start: positionOf(text, starts, start), End: positionOf(text, starts, end)}
}
