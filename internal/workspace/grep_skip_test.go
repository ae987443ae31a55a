package workspace

import (
	"context"
	"testing"
	"time"
)

// GrepOptions.Skip keeps a file out of the result, through the scan and
// through a built index alike: its lines are not returned, its matches
// do not count against Max, and naming it as Dir finds nothing; without
// Skip the same searches find it (control).
func TestGrepSkip(t *testing.T) {
	state := indexWorld(t)
	r := newTestRoot(t, map[string]string{".git/HEAD": "", "a.key": "needle\n", "b.txt": "needle\n"})
	plain, err := NewRoot(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(racySlack) + 50*time.Millisecond) // let the index trust the files
	ctx := context.Background()
	if _, err := BuildIndex(ctx, r, IndexOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	x, err := OpenIndex(r, IndexOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	skip := func(rel string) bool { return rel == "a.key" }
	paths := func(ms []Match) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Path)
		}
		return out
	}
	for name, grep := range map[string]func(context.Context, GrepOptions) ([]Match, error){"scan": plain.Grep, "index": r.Grep} {
		for _, tc := range []struct {
			o    GrepOptions
			want []string
		}{
			{GrepOptions{Pattern: "needle", Skip: skip}, []string{"b.txt"}},
			{GrepOptions{Pattern: "needle", Max: 1, Skip: skip}, []string{"b.txt"}},
			{GrepOptions{Pattern: "needle", Dir: "a.key", Skip: skip}, nil},
			{GrepOptions{Pattern: "needle", Max: 1}, []string{"a.key"}},
			{GrepOptions{Pattern: "needle", Dir: "a.key"}, []string{"a.key"}},
		} {
			ms, err := grep(ctx, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := paths(ms); len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("%s: dir %q max %d skip %v: got %q, want %q", name, tc.o.Dir, tc.o.Max, tc.o.Skip != nil, got, tc.want)
			}
		}
	}
	if s := x.Status(); s.Served == 0 {
		t.Errorf("status %+v: the index answered no search", s)
	}
}
