package verify_test

// These tests run verification through the real sandbox adapter (the one
// cmd/ioh-lsp wires in). Only this test binary imports it: the verify
// package itself reaches the sandbox through contain.Sandbox.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/verify"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// TestMain lets the test binary act as the sandbox's re-executed stages.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, sandbox.Init)) }

func realSandbox(t *testing.T) *sandboxexec.Adapter {
	t.Helper()
	a, err := sandboxexec.New(sandboxexec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestRedGreenHonestyInTheSandbox: a check that the change fixes is
// verified; a check that already passes on the unchanged tree proves
// nothing, even though it passes after the change too.
func TestRedGreenHonestyInTheSandbox(t *testing.T) {
	root := tree(t, map[string]string{"value.txt": "broken\n", "check.sh": "grep -q fixed value.txt\n"})
	fix := []workspace.Change{{Path: "value.txt", Op: workspace.OpModify, Content: []byte("fixed\n"), Mode: 0o644}}
	sb := realSandbox(t)

	honest := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "value", Run: []string{"sh", "check.sh"}}}}
	rep, err := verify.Run(context.Background(), sb, root, fix, honest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified() || len(rep.Checks) != 2 || rep.Checks[0].Passed || !rep.Checks[1].Passed {
		t.Fatalf("honest check: %+v", rep)
	}
	if rep.Checks[1].Backend == "" {
		t.Error("the check result does not name the backend that applied")
	}

	vacuous := contract.Verify{RedGreen: true, Checks: []contract.Check{{Name: "always", Shell: "test -f value.txt"}}}
	rep, err = verify.Run(context.Background(), sb, root, fix, vacuous, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verified() || rep.Proves || !rep.Passed {
		t.Fatalf("vacuous check: passed %v proves %v", rep.Passed, rep.Proves)
	}
	want := []string{
		"check always: the change set modifies value.txt, a file named in its command",
		"check always passed before the change: it proves nothing",
	}
	if diff := cmp.Diff(rep.Warnings, want); diff != "" {
		t.Errorf("warnings (-got +want):\n%s", diff)
	}
	if rep.NeedsHuman() {
		t.Errorf("a data file the check reads is not the check itself: %v", rep.TouchesChecks)
	}

	// The same check with the bug still in place fails on the change set.
	rep, err = verify.Run(context.Background(), sb, root, nil, honest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed {
		t.Error("check passed without the fix")
	}
}

// TestCheckCannotEscape: a check that writes into the real workspace and
// reaches the network is contained; the same commands uncontained succeed,
// so the test can fail.
func TestCheckCannotEscape(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	root := tree(t, map[string]string{"a.txt": "original\n"})
	target := filepath.Join(root, "a.txt")
	escape := "echo tampered > " + target + "; echo tampered > " + filepath.Join(root, "new.txt")

	v := contract.Verify{Checks: []contract.Check{{Name: "escape", Shell: escape}}}
	if _, err := verify.Run(context.Background(), realSandbox(t), root, nil, v, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "original\n" {
		t.Errorf("the check changed the real workspace: a.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
		t.Error("the check created a file in the real workspace")
	}

	out, err := exec.Command("sh", "-c", escape).CombinedOutput()
	if err != nil {
		t.Fatalf("uncontained control run failed: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(target); !strings.Contains(string(got), "tampered") {
		t.Error("control: uncontained write did not land; the contained assertion proves nothing")
	}
}

// TestNetworkOffUnlessAsked: with network off the check cannot open even a
// loopback listener's port from the host.
func TestNetworkOffUnlessAsked(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed; it is the portable socket client here")
	}
	root := tree(t, map[string]string{"net.py": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)\n"})
	v := contract.Verify{Checks: []contract.Check{{Name: "net", Run: []string{py, "net.py"}}}}
	rep, err := verify.Run(context.Background(), realSandbox(t), root, nil, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed {
		t.Errorf("a network connection succeeded with network off:\n%s", rep.Checks[0].Output)
	}
	if len(rep.Checks[0].Locations) == 0 || rep.Checks[0].Locations[0].Path != "net.py" {
		t.Errorf("traceback not located in net.py: %+v", rep.Checks[0].Locations)
	}
}
