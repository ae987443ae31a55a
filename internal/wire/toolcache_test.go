package wire

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, sandbox.Init)) }

func TestToolchainEnv(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".cache/go-build", "go/pkg/mod", "gp/pkg/mod", "xdg/go-build"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"defaults under HOME", map[string]string{"HOME": home},
			[]string{"GOCACHE=" + home + "/.cache/go-build", noModuleIndex, "GOMODCACHE=" + home + "/go/pkg/mod", "GOTOOLCHAIN=local"}},
		{"XDG cache and GOPATH", map[string]string{"HOME": home, "XDG_CACHE_HOME": home + "/xdg", "GOPATH": home + "/gp"},
			[]string{"GOCACHE=" + home + "/xdg/go-build", noModuleIndex, "GOMODCACHE=" + home + "/gp/pkg/mod", "GOTOOLCHAIN=local"}},
		{"cache off, toolchain chosen by the user", map[string]string{"HOME": home, "GOCACHE": "off", "GOTOOLCHAIN": "go1.26.8"},
			[]string{"GOMODCACHE=" + home + "/go/pkg/mod"}},
		{"missing caches are left out", map[string]string{"HOME": home + "/nowhere"},
			[]string{"GOTOOLCHAIN=local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolchainEnv(func(k string) string { return tt.env[k] })
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// TestSandboxSeesHostCacheReadOnly: a sandboxed command, wired as the
// harness wires it, gets the host's Go build cache, and what it writes
// there never reaches the host (in the linux tier it lands in a private
// layer, elsewhere the write fails), so it cannot poison the user's
// builds; the same write uncontained reaches the host.
func TestSandboxSeesHostCacheReadOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the read-only host root is the Linux backend's")
	}
	cache := sandboxtest.Dir(t) // not under /tmp: the sandbox has a private /tmp
	env := map[string]string{"GOCACHE": cache, "HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	ad, err := sandboxexec.New(sandboxexec.Options{Env: toolchainEnv(getenv), Scratch: toolchainScratch(getenv)})
	if err != nil {
		t.Fatal(err)
	}
	probe := `echo "cache=$GOCACHE"; echo poison > "$GOCACHE/probe" && echo wrote`
	res, err := ad.Exec(context.Background(), &contain.Request{Shell: probe, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	if !strings.Contains(out, "cache="+cache) {
		t.Fatalf("sandboxed command did not get GOCACHE=%s:\n%s", cache, out)
	}
	if _, err := os.Stat(filepath.Join(cache, "probe")); err == nil {
		t.Fatalf("the sandboxed command's probe file is in the host cache (backend %s):\n%s", res.Backend, out)
	}
	// Control: the same command uncontained writes the file.
	cmd := exec.Command("/bin/sh", "-c", probe)
	cmd.Env = append(os.Environ(), "GOCACHE="+cache)
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "wrote") {
		t.Fatalf("uncontained control failed: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(cache, "probe")); err != nil {
		t.Fatalf("uncontained control: %v", err)
	}
}
