package workspace

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkGoroot searches and lists the Go source tree (for profiling;
// bench/grep.sh compares with ripgrep).
func BenchmarkGoroot(b *testing.B) {
	r, err := NewRoot(filepath.Join(goroot(b), "src"))
	if err != nil {
		b.Skip(err)
	}
	for _, o := range []GrepOptions{{Pattern: "ParseDuration"}, {Pattern: "err != nil"}, {Pattern: "unexpected eof", IgnoreCase: true}} {
		b.Run("grep "+o.Pattern, func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Grep(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("find", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Find(context.Background(), "**/*_test.go"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
