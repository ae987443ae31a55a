package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStatusNamesTheRunningCheck: while a check runs, the status names
// that check (on a pipe: once, after the plain-line wait), not the last
// one that ended.
func TestStatusNamesTheRunningCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	srv := fakeSlowModel(t, 0)
	user := fmt.Sprintf("model:\n  provider: openai-compatible\n  base_url: %s/v1\n  name: local-llm\nprices:\n  local-llm: {input: 0, output: 0}\n", srv.URL)
	task := fmt.Sprintf("version: 1\ngoal: say done\nverify:\n  checks:\n    - name: quick\n      shell: \"true\"\n    - name: slow\n      shell: \"sleep %d\"\n",
		int((plainAfter+2*time.Second)/time.Second))
	dir, env := firstHourWorkspace(t, user, task)
	_, out := runIn(t, bin, dir, env, "run", "task.ioh.yaml", "--approve", "never")
	if !strings.Contains(out, "running check slow (1 done) (step 1)…\n") {
		t.Errorf("the status does not name the check that runs:\n%s", out)
	}
}
