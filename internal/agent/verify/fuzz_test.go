package verify

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary output to the location parser: it must never
// panic, and every location it returns must have a path and a line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"pkg/b/b.go:3:23: cannot use x\n",
		"--- FAIL: TestAdd (0.00s)\n    a_test.go:7: bad\nFAIL\texample.com/cap/pkg/a\t0.005s\n",
		"error[E0308]: mismatched types\n --> src/main.rs:2:18\n",
		"thread 'x' panicked at src/lib.rs:8:9:\n",
		"Traceback (most recent call last):\n  File \"x.py\", line 3, in f\nValueError: x\n",
		"src/a.ts(2,9): error TS2322: no\n",
		"Error: x\n    at g (/a/b.js:2:20)\n",
		"\x1b[31m\x1b[0m:1:1:\n",
	} {
		f.Add(s)
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, out string) {
		for _, l := range Parse(out, ParseOptions{Root: root, Changed: []string{"x.py", "src/lib.rs"}}) {
			if l.Path == "" || l.Line <= 0 || strings.ContainsRune(l.Message, '\n') {
				t.Fatalf("bad location %+v from %q", l, out)
			}
		}
	})
}
