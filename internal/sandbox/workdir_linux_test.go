package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestWorkdirUnderTmp: a working directory under /tmp (which the sandbox
// replaces with a private tmpfs) that no writable root covers is still
// there inside, read-only: the command reads it and cannot write it; the
// same command uncontained writes.
func TestWorkdirUnderTmp(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	wd := t.TempDir() // under /tmp
	if !strings.HasPrefix(wd, "/tmp/") {
		t.Skipf("TMPDIR is not /tmp (%s): nothing to test", wd)
	}
	os.Chmod(wd, 0o777)
	if err := os.WriteFile(filepath.Join(wd, "in.txt"), []byte("visible\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, output := run(t, Spec{Argv: []string{h, helperArg, "read", "in.txt"}, Dir: wd, Writable: []string{sandboxtest.Dir(t)}})
	if out.ExitCode != 0 || !strings.Contains(output, "visible") {
		t.Fatalf("reading the working directory inside: exit %d\n%s", out.ExitCode, output)
	}
	out, output = run(t, Spec{Argv: []string{h, helperArg, "write", "new.txt"}, Dir: wd, Writable: []string{sandboxtest.Dir(t)}})
	refused(t, out, output)
	if _, err := os.Stat(filepath.Join(wd, "new.txt")); err == nil {
		t.Fatal("the contained command wrote into a working directory that is not a writable root")
	}
	control(t, wd, h, helperArg, "write", "new.txt")
}

// TestWorkdirMaskedIsAClearError: a working directory at or inside a
// masked path, also when it is itself the writable root (cd ~/.ssh &&
// sandbox run), is a setup error that says it stays masked, before
// anything runs; the same directory unmasked runs (control).
func TestWorkdirMaskedIsAClearError(t *testing.T) {
	requireLinuxBackend(t)
	home := sandboxtest.Dir(t)
	t.Setenv("HOME", home)
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(filepath.Join(ssh, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir string
		writable  []string
		want      string
	}{
		{"inside a masked path", filepath.Join(ssh, "sub"), []string{sandboxtest.Dir(t)}, "inside the masked path " + ssh},
		{"the masked path as the writable root", ssh, []string{ssh}, "is a masked path, which stays hidden inside the sandbox even as a writable root"},
	} {
		_, err := testRunner().Run(context.Background(), &Spec{Argv: []string{"true"}, Dir: c.dir, Writable: c.writable, Backend: BackendLinux, View: testView()})
		if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "working directory "+c.dir) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want a setup error naming %s and saying %q", c.name, err, c.dir, c.want)
		}
	}
	plain := filepath.Join(home, "plain")
	if err := os.Mkdir(plain, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, output := run(t, Spec{Argv: []string{"true"}, Dir: plain, Writable: []string{plain}}); out.ExitCode != 0 {
		t.Errorf("control: an unmasked writable root: exit %d:\n%s", out.ExitCode, output)
	}
}
