package rootfs

import (
	"slices"
	"strings"
	"testing"
)

// TestHintEnvRoundTrip: every part comes back as it was sent, whatever
// bytes it holds; a malformed or oversized hint is no hint.
func TestHintEnvRoundTrip(t *testing.T) {
	parts := []string{HintArg, "0", "3", "/a:b", "/12:x", "", "/new\nline", "/ spaces /", "/ü"}
	entry, ok := EncodeHintEnv(parts)
	if !ok || !strings.HasPrefix(entry, HintEnv+"=") {
		t.Fatalf("entry %q %v", entry, ok)
	}
	if got := DecodeHintEnv(strings.TrimPrefix(entry, HintEnv+"=")); !slices.Equal(got, parts) {
		t.Fatalf("got %q, want %q", got, parts)
	}
	for _, bad := range []string{"x", ":", "3:ab", "-1:", "2:ab3", "1:a:b", "99999999999999999999:a"} {
		if p := DecodeHintEnv(bad); p != nil {
			t.Errorf("%q decoded as %q", bad, p)
		}
	}
	for _, hint := range [][]string{nil, {"/a\x00b"}, {strings.Repeat("/x", MaxHintEnv)}} {
		if entry, ok := EncodeHintEnv(hint); ok || entry != "" {
			t.Errorf("a hint of %d bytes was sent", len(strings.Join(hint, "")))
		}
	}
}
