package rootfs

import (
	"slices"
	"testing"
)

// TestHintArgs: the hint survives PID 1's command line, masks and links
// included, and a malformed one is no hint.
func TestHintArgs(t *testing.T) {
	in := Hint{Network: true, View: []string{"/etc", "/usr", "/home/u/src"},
		Masked: []string{"/etc/shadow", "/home/u/src/.env"},
		Links:  map[string]string{"/lib": "usr/lib", "/bin": "usr/bin"}}
	h, ok := ParseHint(in.Args())
	if !ok || !h.Network || !slices.Equal(h.View, in.View) || !slices.Equal(h.Masked, in.Masked) ||
		len(h.Links) != 2 || h.Links["/lib"] != "usr/lib" || h.Links["/bin"] != "usr/bin" {
		t.Errorf("round trip: %+v %v", h, ok)
	}
	if h, ok := ParseHint([]string{HintArg, "0", "1", "/usr", "0"}); !ok || len(h.Masked) != 0 || len(h.Links) != 0 {
		t.Errorf("a hint without masks or links: %+v %v", h, ok)
	}
	for _, bad := range [][]string{
		nil,
		{HintArg, "2", "1", "/usr", "0"},
		{HintArg, "0", "2", "/usr", "0"},
		{HintArg, "0", "0", "0"},
		{HintArg, "0", "x", "/usr", "0"},
		{HintArg, "0", "1", "/usr"},
		{HintArg, "0", "1", "usr", "0"},
		{HintArg, "0", "1", "/usr/../etc", "0"},
		{HintArg, "0", "1", "/usr", "2", "/etc/shadow"},
		{HintArg, "0", "1", "/usr", "1", "etc/shadow"},
		{HintArg, "0", "1", "/usr", "0", "/lib"},
		{HintArg, "0", "1", "/usr", "0", "lib", "usr/lib"},
		{"--view-hint", "0", "d", "/usr"},
	} {
		if _, ok := ParseHint(bad); ok {
			t.Errorf("hint %q accepted", bad)
		}
	}
	if a := (Hint{}).Args(); a != nil {
		t.Errorf("a run without a view gave hint %q", a)
	}
}
