package sandbox

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestOutputKeeperHeadTail: past the limit the first and the last half
// are kept with the count of bytes left out between them; stderr's bytes
// in the tail go to stderr; the stream gets every byte; nothing stops.
func TestOutputKeeperHeadTail(t *testing.T) {
	var out, errb, stream bytes.Buffer
	calls := 0
	o, e, done := newCapPair(10, &out, &errb, &stream, func() { calls++ })
	o.Write([]byte("12345"))
	e.Write([]byte("678"))
	n, err := o.Write([]byte("abcdefghij"))
	if n != 10 || err != nil {
		t.Errorf("Write past the limit = %d, %v; want the whole length accepted", n, err)
	}
	e.Write([]byte("XYZ"))
	if !done() {
		t.Error("done reported nothing left out")
	}
	want := "12345" + fmt.Sprintf(DroppedMarker, 11) + "ij"
	if out.String() != want || errb.String() != "XYZ" {
		t.Errorf("stdout %q stderr %q; want %q and %q", out.String(), errb.String(), want, "XYZ")
	}
	if stream.String() != "12345678abcdefghijXYZ" || calls != 0 {
		t.Errorf("stream %q, runaway calls %d; want every byte and none", stream.String(), calls)
	}
	e.Write([]byte("late"))
	if strings.Contains(errb.String(), "late") || !done() {
		t.Errorf("a write after done was kept or done changed: %q", errb.String())
	}
}

// TestOutputKeeperWithinLimit: output within the limit is kept whole and
// in order, with no marker.
func TestOutputKeeperWithinLimit(t *testing.T) {
	var out bytes.Buffer
	o, e, done := newCapPair(100, &out, &out, nil, nil)
	o.Write([]byte("head "))
	e.Write([]byte("err "))
	o.Write([]byte(strings.Repeat("x", 60)))
	o.Write([]byte(" end"))
	if done() || out.String() != "head err "+strings.Repeat("x", 60)+" end" {
		t.Errorf("done %v, kept %q", done(), out.String())
	}
}

// TestOutputKeeperRunaway: only the runaway cap stops a run, once, and the
// stream ends there too; a limit above the cap raises it.
func TestOutputKeeperRunaway(t *testing.T) {
	old := runawayOutput
	runawayOutput = 1000
	defer func() { runawayOutput = old }()
	var out, stream bytes.Buffer
	calls := 0
	o, _, done := newCapPair(100, &out, nil, &stream, func() { calls++ })
	for range 30 {
		o.Write([]byte(strings.Repeat("y", 50)))
	}
	if calls != 1 || stream.Len() != 1000 || !done() {
		t.Errorf("runaway calls %d, stream %d bytes; want 1 and 1000", calls, stream.Len())
	}
	o2, _, _ := newCapPair(5000, &out, nil, nil, func() { t.Error("a limit above the runaway cap was stopped at the cap") })
	o2.Write(make([]byte, 2000))
}
