package wire

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// TestSandboxedGoTestOfAnOldModuleWithReadOnlyHostCache: a real `go test`
// of a module whose files are older than the go command's 2-second index
// cutoff and that the host cache has not indexed at this path and these
// mtimes (any project edited since the user's last build) passes inside the
// sandbox, both with the host's build cache read-only (the landlock tier)
// and with the scratch layer over it (the linux tier as wired), compiles
// nothing (the host cache's packages are reused), and leaves the cache
// exactly as it was. The same contained run with the module index left on
// fails with the read-only error (what every Go check got before
// noModuleIndex), which shows this module and this cache really trigger it.
// And `go list -export` of a changed package (what go/packages tools run)
// fails over the read-only cache and works over the layer.
func TestSandboxedGoTestOfAnOldModuleWithReadOnlyHostCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the read-only host root is the Linux backend's")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cache := sandboxtest.Dir(t) // not under /tmp: the sandbox has a private /tmp
	home := t.TempDir()
	mod := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":      "module example.com/old\n\ngo 1.22\n",
		"old.go":      "package old\n\nfunc Twice(n int) int { return 2 * n }\n",
		"old_test.go": "package old\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n\tif Twice(2) != 4 {\n\t\tt.Fatal(\"Twice(2) != 4\")\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"GOCACHE": cache, "HOME": home}
	tcEnv := toolchainEnv(func(k string) string { return env[k] })

	// The user's own build fills the host cache (compiled packages and the
	// test result), uncontained.
	warm := exec.CommandContext(ctx, goBin, "test", "./...")
	warm.Dir = mod
	warm.Env = append(os.Environ(), "GOCACHE="+cache, "HOME="+home, "GOTOOLCHAIN=local", "GOFLAGS=")
	if out, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("uncontained go test to fill the host cache: %v\n%s", err, out)
	}
	// Then the user edits: the files' mtimes move (to a time well past the
	// index cutoff), so the module index of this directory misses; the
	// contents, and so every compiled package, stay the same.
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"go.mod", "old.go", "old_test.go"} {
		if err := os.Chtimes(filepath.Join(mod, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	before := cacheListing(t, cache)

	// run runs argv in the sandbox over the module (plus changes), with the
	// cache as the harness wires it; layered: with the scratch layer over
	// the cache (what the linux tier gets), else read-only (the landlock
	// tier, or a kernel that cannot layer).
	run := func(layered bool, argv []string, changes []workspace.Change, extraEnv ...string) *contain.Result {
		t.Helper()
		opts := sandboxexec.Options{Env: append(append([]string{"GOFLAGS="}, tcEnv...), extraEnv...)}
		if layered {
			opts.Scratch = toolchainScratch(func(k string) string { return env[k] })
		}
		ad, err := sandboxexec.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ad.Exec(ctx, &contain.Request{Argv: argv, Root: mod, Changes: changes})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	goTest := []string{goBin, "test", "-x", "./..."}

	// Control: the module index on and no layer, as before the fix.
	res := run(false, goTest, nil, "GODEBUG=goindex=1")
	if res.ExitCode == 0 || !strings.Contains(string(res.Output), "read-only file system") {
		t.Fatalf("with the module index on, the contained go test did not hit the read-only cache (exit %d, backend %s); the test no longer shows the failure:\n%s",
			res.ExitCode, res.Backend, res.Output)
	}
	for _, layered := range []bool{false, true} {
		res = run(layered, goTest, nil)
		out := string(res.Output)
		if res.ExitCode != 0 {
			t.Fatalf("contained go test (layered %v) failed (exit %d, backend %s):\n%s", layered, res.ExitCode, res.Backend, out)
		}
		if !strings.Contains(out, "ok  \texample.com/old\t") {
			t.Errorf("contained go test (layered %v) did not report the package ok:\n%s", layered, out)
		}
		// -x prints each command the go command runs: a compile would
		// mean a package the host cache holds was built again.
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "/compile ") {
				t.Errorf("contained go test (layered %v) compiled a package the host cache holds:\n%s", layered, line)
				break
			}
		}
	}

	// go list -export (go/packages tools such as staticcheck) of a package
	// the host never compiled must store what it compiles: read-only, it
	// fails; over the scratch layer it works.
	edit := []workspace.Change{{Path: "more.go", Op: workspace.OpCreate, Content: []byte("package old\n\nfunc Thrice(n int) int { return 3 * n }\n")}}
	list := []string{goBin, "list", "-export", "-f", "export={{.Export}}", "."}
	res = run(false, list, edit)
	if res.ExitCode == 0 || !strings.Contains(string(res.Output), "read-only file system") {
		t.Errorf("go list -export over the read-only cache did not fail on the store (exit %d, backend %s); the layered case below proves nothing:\n%s", res.ExitCode, res.Backend, res.Output)
	}
	res = run(true, list, edit)
	if res.ExitCode != 0 || !strings.Contains(string(res.Output), "export="+cache) {
		t.Errorf("go list -export over the scratch layer (exit %d, backend %s):\n%s", res.ExitCode, res.Backend, res.Output)
	}
	if diff := cmp.Diff(before, cacheListing(t, cache)); diff != "" {
		t.Errorf("the contained runs changed the host cache (-before +after):\n%s", diff)
	}
}

// cacheListing is every entry under dir with its mode, size and mtime (a
// directory's mtime moves when an entry is added or removed).
func cacheListing(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m[p] = fmt.Sprintf("%v %d %s", fi.Mode(), fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
