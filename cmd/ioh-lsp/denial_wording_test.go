package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAutomaticDenialNamesWhoDenied: under --approve never and --approve
// auto an Ask-tier act is denied by the mode, and the model reads that
// (the trace's tool result), never "denied by the user". Control: a policy
// rule's denial names the rule and its layer.
func TestAutomaticDenialNamesWhoDenied(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tt := range []struct{ mode, task, want string }{
		{"never", askTask, "denied by --approve never: write notes.txt"},
		{"auto", askTask, "denied by --approve auto: write notes.txt"},
		{"never", crashTask + "policy:\n  rules:\n    - {act: write, effect: deny, pattern: \"notes.txt\"}\n",
			`denied by policy: write notes.txt (layer task, rule deny write \"notes.txt\"`},
	} {
		dir, env := newCrashWorkspace(t)
		if err := os.WriteFile(filepath.Join(dir, "task.ioh.yaml"), []byte(tt.task), 0o644); err != nil {
			t.Fatal(err)
		}
		cli(t, ctx, bin, dir, append(env, "IOH_TEST_MODEL_DELAY=0s"), "run", "task.ioh.yaml", "--approve", tt.mode)
		tr := traceText(t, ctx, bin, dir, env, "--last")
		if !strings.Contains(tr, tt.want) || strings.Contains(tr, "denied by the user") {
			t.Errorf("--approve %s: the trace lacks %q or says \"denied by the user\":\n%s", tt.mode, tt.want, tr)
		}
	}
}
