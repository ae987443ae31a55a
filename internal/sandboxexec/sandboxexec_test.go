package sandboxexec

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, sandbox.Init)) }

func workspaceDir(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{
		"keep.txt":      "keep\n",
		"edit.txt":      "old\n",
		"gone.txt":      "gone\n",
		"sub/inner.txt": "inner\n",
	} {
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

func TestExecSeesStagedChanges(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := workspaceDir(t)
	res, err := a.Exec(context.Background(), &contain.Request{
		Shell: `cat edit.txt new.txt sub/inner.txt; test -e gone.txt && echo gone-visible; echo scratch > build.out; cat build.out; pwd`,
		Root:  root,
		Changes: []workspace.Change{
			{Path: "edit.txt", Op: workspace.OpModify, Content: []byte("new\n")},
			{Path: "new.txt", Op: workspace.OpCreate, Content: []byte("created\n"), Mode: 0o600},
			{Path: "gone.txt", Op: workspace.OpDelete},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(root)
	want := "new\ncreated\ninner\nscratch\n" + real + "\n"
	if diff := cmp.Diff(string(res.Output), want); diff != "" {
		t.Errorf("output (-got +want):\n%s", diff)
	}
	if !res.Passed(0) {
		t.Errorf("result %+v, want a clean exit", res)
	}
	// The workspace on disk is untouched and the command's write vanished.
	got, _ := os.ReadFile(filepath.Join(root, "edit.txt"))
	if string(got) != "old\n" {
		t.Errorf("edit.txt on disk = %q, want untouched", got)
	}
	for _, name := range []string{"new.txt", "build.out"} {
		if _, err := os.Stat(filepath.Join(root, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s leaked into the workspace: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "gone.txt")); err != nil {
		t.Errorf("gone.txt deleted on disk: %v", err)
	}
}

func TestExecDirAndOutputLimit(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := workspaceDir(t)
	res, err := a.Exec(context.Background(), &contain.Request{Argv: []string{"cat", "inner.txt"}, Root: root, Dir: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(res.Output), "inner\n"); diff != "" {
		t.Errorf("output (-got +want):\n%s", diff)
	}
	res, err = a.Exec(context.Background(), &contain.Request{Shell: "yes", Root: root, OutputLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// yes never ends: it runs until the runaway cap stops it; what is
	// kept is the head and tail of 1000 bytes with the marker between.
	if res.CapHit != sandbox.CapOutput || !res.Truncated || len(res.Output) > 1000+len(sandbox.DroppedMarker)+20 ||
		!strings.HasPrefix(string(res.Output), "y\n") || !strings.Contains(string(res.Output), "bytes of output left out here") {
		t.Errorf("flood: cap %q truncated %v len %d, want the runaway cap and 1000 bytes kept around the marker:\n%.300s", res.CapHit, res.Truncated, len(res.Output), res.Output)
	}
}

func TestExecBadRequests(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := workspaceDir(t)
	for _, tc := range []struct {
		name string
		req  contain.Request
	}{
		{"no command", contain.Request{Root: root}},
		{"both", contain.Request{Argv: []string{"true"}, Shell: "true", Root: root}},
		{"relative root", contain.Request{Argv: []string{"true"}, Root: "ws"}},
		{"dir escapes", contain.Request{Argv: []string{"true"}, Root: root, Dir: "../x"}},
		{"bad op", contain.Request{Argv: []string{"true"}, Root: root, Changes: []workspace.Change{{Path: "a", Op: "rename"}}}},
		{"change escapes", contain.Request{Argv: []string{"true"}, Root: root, Changes: []workspace.Change{{Path: "../a", Op: workspace.OpCreate}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res, err := a.Exec(context.Background(), &tc.req); err == nil {
				t.Errorf("Exec = %+v, want an error", res)
			}
		})
	}
	if _, err := New(Options{Writable: []string{"relative"}}); err == nil {
		t.Error("New accepted a relative writable dir")
	}
}

// TestGoRunsInsideWithReadOnlyCache: the real go command works in the
// sandbox with the machine's build cache readable but not writable (how
// internal/wire sets it up), so sandboxed code cannot poison the cache.
func TestGoRunsInsideWithReadOnlyCache(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH")
	}
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	a, err := New(Options{Env: []string{"GOCACHE=" + cache, "GOTOOLCHAIN=local", "GOTELEMETRY=off"}})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	res, err := a.Exec(context.Background(), &contain.Request{
		Argv: []string{"go", "vet", "./..."}, Root: root,
		Changes: []workspace.Change{
			{Path: "go.mod", Op: workspace.OpCreate, Content: []byte("module example.com/v\n\ngo 1.21\n")},
			{Path: "v.go", Op: workspace.OpCreate, Content: []byte("package v\n\nfunc V() int { return 1 }\n")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed(0) {
		t.Errorf("go vet over the staged module: %+v\n%s", res, res.Output)
	}
}
