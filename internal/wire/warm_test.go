package wire

import (
	"context"
	"testing"
	"time"
)

// TestEnginesHoldWarmStages: every engine that built its own sandbox holds
// the process's warm stages; closing the last one releases them (which
// removes the spare private directory and cgroups made ahead), closing one
// of two does not.
func TestEnginesHoldWarmStages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held := func() int {
		warmUsers.Lock()
		defer warmUsers.Unlock()
		return warmUsers.n
	}
	before := held()
	var engs []*Engine
	for range 2 {
		eng, err := NewHarness(ctx, Options{Root: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		engs = append(engs, eng)
	}
	if got := held(); got != before+2 {
		t.Fatalf("two engines hold %d, want %d", got, before+2)
	}
	engs[0].Close()
	if got := held(); got != before+1 {
		t.Errorf("after closing one engine: %d, want %d", got, before+1)
	}
	engs[1].Close()
	if got := held(); got != before {
		t.Errorf("after closing both: %d, want %d", got, before)
	}
}
