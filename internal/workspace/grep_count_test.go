package workspace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// GrepCount's total is the same through the index as by scanning: exact
// under the cap, at least the cap past it.
func TestGrepCountThroughIndex(t *testing.T) {
	state := indexWorld(t)
	rng := rand.New(rand.NewPCG(7, 9))
	files := map[string]string{".git/HEAD": ""}
	for i := range 20 {
		files[fmt.Sprintf("d%d/f%d.go", i%3, i)] = randomText(rng)
	}
	r := newTestRoot(t, files)
	plain, err := NewRoot(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(racySlack) + 50*time.Millisecond)
	ctx := context.Background()
	if _, err := BuildIndex(ctx, r, IndexOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	x, err := OpenIndex(r, IndexOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	cs, pcs := NewChangeSet(r), NewChangeSet(plain)
	for _, o := range []GrepOptions{{Pattern: "a"}, {Pattern: "a", Max: 5}, {Pattern: "e", Max: 1}, {Pattern: "zzzz-none"}} {
		ms, total, err := cs.GrepCount(ctx, o)
		pms, ptotal, perr := pcs.GrepCount(ctx, o)
		if err != nil || perr != nil {
			t.Fatal(err, perr)
		}
		if diff := cmp.Diff(ms, pms); diff != "" || total != ptotal {
			t.Errorf("%+v: index %d, scan %d (-index +scan):\n%s", o, total, ptotal, diff)
		}
		switch {
		case o.Max == 0 && total != len(ms):
			t.Errorf("%+v: total %d, %d matches shown without a cap", o, total, len(ms))
		case o.Max > 0 && total > o.Max && len(ms) != o.Max:
			t.Errorf("%+v: %d shown of %d", o, len(ms), total)
		case total < len(ms):
			t.Errorf("%+v: total %d under the %d shown", o, total, len(ms))
		}
	}
	if s := x.Status(); s.Served == 0 {
		t.Errorf("status %+v: the index answered nothing", s)
	}
}
