package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/wire"
)

// TestStoreFailureExitCodes: a state directory that cannot hold the
// trace (IOH_STATE_DIR names a regular file) is a store failure, exit 6
// naming the path, for every command that opens the store; a relative
// IOH_STATE_DIR is a setup error, exit 2. Control: with a usable state
// directory the same commands succeed.
func TestStoreFailureExitCodes(t *testing.T) {
	cas := `{"version":1,"turns":[{"tool_calls":[{"name":"finish","arguments":{"summary":"x"}}]}]}`
	w := newBudgetWorld(t, map[string]string{"c.json": cas, "t.ioh.yaml": "version: 1\ngoal: g\nbudget: {cost_usd: 0}\n"})
	good := w.env["IOH_STATE_DIR"]
	code, _, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "c.json")
	if code != exitOK {
		t.Fatalf("control: run exit %d\n%s", code, errOut)
	}
	id := runID(t, errOut)
	for _, args := range [][]string{{"runs"}, {"trace", id}} {
		if code, _, errOut := w.cli(args...); code != exitOK {
			t.Fatalf("control: %v exit %d\n%s", args, code, errOut)
		}
	}
	file := filepath.Join(t.TempDir(), "state-is-a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir  string
		exit int
		say  string
	}{{file, exitStorage, file}, {"relative/state", exitUsage, "relative path"}} {
		w.env["IOH_STATE_DIR"] = tt.dir
		for _, args := range [][]string{{"run", "t.ioh.yaml", "--approve", "never", "--cassette", "c.json"}, {"resume", id}, {"runs"}, {"trace", id}, {"approve", id}} {
			code, _, errOut := w.cli(args...)
			if code != tt.exit || !strings.Contains(errOut, tt.say) {
				t.Errorf("IOH_STATE_DIR=%s %v: exit %d, want %d and %q:\n%s", tt.dir, args, code, tt.exit, tt.say, errOut)
			}
		}
	}
	w.env["IOH_STATE_DIR"] = good
}

// TestResumeLeasedRunExitCode: resuming a run another live process
// drives is refused as a usage error (exit 2), not reported as a failed
// verification (1); once the lease is released the same resume goes on
// (control).
func TestResumeLeasedRunExitCode(t *testing.T) {
	cas := `{"version":1,"turns":[{"tool_calls":[{"name":"write_file","arguments":{"path":"a.txt","content":"x\n"}}]},{"tool_calls":[{"name":"finish","arguments":{"summary":"x"}}]}]}`
	w := newBudgetWorld(t, map[string]string{"c.json": cas, "t.ioh.yaml": "version: 1\ngoal: g\nbudget: {cost_usd: 0}\n"})
	code, _, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--cassette", "c.json")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s", code, errOut)
	}
	id := runID(t, errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := wire.OpenStore(ctx, w.dir, w.getenv, func() []string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const other = "elsewhere.example:1:abcd"
	if err := st.Acquire(ctx, id, other, time.Hour); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = w.cli("resume", id, "--approve", "never", "--cassette", "c.json")
	if code != exitUsage || !strings.Contains(errOut, trace.ErrLeased.Error()) {
		t.Errorf("resume of a leased run: exit %d, want %d and %q:\n%s", code, exitUsage, trace.ErrLeased, errOut)
	}
	if err := st.Release(ctx, id, other); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = w.cli("resume", id, "--approve", "never", "--cassette", "c.json"); code != exitOK {
		t.Errorf("control: resume after the lease is released: exit %d\n%s", code, errOut)
	}
}
