package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	out, output := run(t, Spec{Argv: []string{h, helperArg, "read", "in.txt"}, Dir: wd, Writable: []string{outsideDir(t)}})
	if out.ExitCode != 0 || !strings.Contains(output, "visible") {
		t.Fatalf("reading the working directory inside: exit %d\n%s", out.ExitCode, output)
	}
	out, output = run(t, Spec{Argv: []string{h, helperArg, "write", "new.txt"}, Dir: wd, Writable: []string{outsideDir(t)}})
	refused(t, out, output)
	if _, err := os.Stat(filepath.Join(wd, "new.txt")); err == nil {
		t.Fatal("the contained command wrote into a working directory that is not a writable root")
	}
	control(t, wd, h, helperArg, "write", "new.txt")
}

// TestWorkdirMaskedIsAClearError: a working directory inside a masked path
// fails with a message naming the directory, not the command.
func TestWorkdirMaskedIsAClearError(t *testing.T) {
	requireLinuxBackend(t)
	home := outsideDir(t)
	t.Setenv("HOME", home)
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	out, output := run(t, Spec{Argv: []string{"true"}, Dir: ssh, Writable: []string{outsideDir(t)}})
	if out.ExitCode == 0 {
		t.Fatalf("a command ran inside the masked %s:\n%s", ssh, output)
	}
	if !strings.Contains(output, "working directory "+ssh) {
		t.Errorf("error does not name the working directory:\n%s", output)
	}
}
