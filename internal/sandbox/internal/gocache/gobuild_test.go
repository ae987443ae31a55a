package gocache

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestGoBuildThroughServer has a real go command use the server as its
// GOCACHEPROG (this test binary re-executed, TestMain), as the sandbox's
// gocache stage is used, over a host cache made read-only: `go build` of a
// module succeeds; `go list -export` then names the host's own file for
// the package the host had compiled and a private one for the package it
// had not; the host cache is unchanged and the private directory received
// entries. Pair: the same build with the host cache as GOCACHE writes it,
// so the unchanged listing is not unchanged for want of a write.
func TestGoBuildThroughServer(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: the go command cannot be made to talk to the server")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host, private, mod := t.TempDir(), t.TempDir(), t.TempDir()
	if strings.ContainsAny(self+host+private, `'"`) {
		t.Skip("a path holds a quote, which GOCACHEPROG cannot carry")
	}
	files := map[string]string{
		"go.mod":     "module example.com/m\n\ngo 1.22\n",
		"old/old.go": "package old\n\nfunc Twice(n int) int { return 2 * n }\n",
		"new/new.go": "package new\n\nfunc Thrice(n int) int { return 3 * n }\n",
	}
	for name, src := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := func(env []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=", "GOTELEMETRY=off", "GOWORK=off", "GOPROXY=off", "GOCACHEPROG=")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The user's own build fills the host cache with one package.
	if out, err := goCmd([]string{"GOCACHE=" + host}, "build", "./old"); err != nil {
		t.Fatalf("go build ./old into the host cache: %v\n%s", err, out)
	}
	readOnly(t, host)
	before := sandboxtest.TreeListing(t, host)

	// What goCacheScratch gives a run: a private GOCACHE, and the server
	// as GOCACHEPROG.
	served := []string{"GOCACHE=" + private, fmt.Sprintf("GOCACHEPROG='%s' %s '%s' '%s'", self, serveArg, host, private)}
	if out, err := goCmd(served, "build", "./..."); err != nil {
		t.Fatalf("go build through the server: %v\n%s", err, out)
	}
	out, err := goCmd(served, "list", "-export", "-f", "{{.ImportPath}} {{.Export}}", "./...")
	if err != nil {
		t.Fatalf("go list -export through the server: %v\n%s", err, out)
	}
	exports := map[string]string{}
	for line := range strings.Lines(out) {
		if pkg, file, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			exports[pkg] = file
		}
	}
	if f := exports["example.com/m/old"]; !strings.HasPrefix(f, host+string(filepath.Separator)) {
		t.Errorf("export data of the package the host compiled is %q, want the host's own file under %s:\n%s", f, host, out)
	}
	if f := exports["example.com/m/new"]; !strings.HasPrefix(f, private+string(filepath.Separator)) {
		t.Errorf("export data of the package the host never compiled is %q, want a file under the private %s:\n%s", f, private, out)
	}
	if after := sandboxtest.TreeListing(t, host); after != before {
		t.Errorf("the host cache changed:\nbefore %s\nafter  %s", before, after)
	}
	if n := actionEntries(t, private); n == 0 {
		t.Errorf("the private cache %s received no action entries", private)
	}

	writable(t, host)
	before = sandboxtest.TreeListing(t, host)
	if out, err := goCmd([]string{"GOCACHE=" + host}, "build", "./..."); err != nil {
		t.Fatalf("control: go build with the host cache as GOCACHE: %v\n%s", err, out)
	}
	if sandboxtest.TreeListing(t, host) == before {
		t.Error("control: a build with the host cache as GOCACHE left it unchanged, so the unchanged listing above proves nothing")
	}
}

// readOnly takes the write bits off every directory under dir (the
// cleanup puts them back, so the test's directory can be removed). Root
// writes through them; the listing is what shows the host cache is left
// alone.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	chmodDirs(t, dir, 0o555)
	t.Cleanup(func() { chmodDirs(t, dir, 0o755) })
}

func writable(t *testing.T, dir string) {
	t.Helper()
	chmodDirs(t, dir, 0o755)
}

func chmodDirs(t *testing.T, dir string, mode fs.FileMode) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// actionEntries counts the action entries (files ending "-a") under dir.
func actionEntries(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "-a") {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
