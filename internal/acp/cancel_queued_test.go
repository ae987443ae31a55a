package acp

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
)

// TestServerCancelRightBehindPrompt: a session/cancel the client sends
// right after its session/prompt (both read before the prompt's handler
// has started its run) cancels that prompt: it answers cancelled, no
// permission is asked and the disk is untouched. Requests run on their own
// goroutines while notifications run in order, so without the prompt
// being admitted as it is read the cancel found no prompt and was lost.
func TestServerCancelRightBehindPrompt(t *testing.T) {
	ws, task, cassette := workspaceWithTask(t)
	var mu sync.Mutex
	asked := 0
	c := newClient(t, cassette, func(map[string]any) any {
		mu.Lock()
		asked++
		mu.Unlock()
		return selected(optAllowOnce)
	})
	sid := openSession(t, c, ws)
	c.mu.Lock()
	c.id++
	id := c.id
	ch := make(chan map[string]any, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	prompt, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": methodSessionPrompt, "params": taskPrompt(sid, task)})
	cancel, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": methodSessionCancel, "params": map[string]any{"sessionId": sid}})
	if _, err := c.in.Write(append(append(append(prompt, '\n'), cancel...), '\n')); err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	select {
	case r = <-ch:
	case <-c.ctx.Done():
		t.Fatal("no answer to the prompt before the test deadline")
	}
	if got := r["result"].(map[string]any)["stopReason"]; got != stopCancelled {
		t.Errorf("stop reason %v, want cancelled: %v", got, r)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 0 {
		t.Errorf("%d permission requests for a cancelled prompt", asked)
	}
	if got := readFile(t, filepath.Join(ws, "stats.go")); got != statsBefore {
		t.Errorf("a cancelled prompt changed the file:\n%s", got)
	}
}
