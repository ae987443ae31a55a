package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// hostSetID reports whether p on the host carries a set-id bit.
func hostSetID(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0
}

// TestContainSetID: nothing the command writes into a writable root may
// come out set-user-ID or set-group-ID on the host, whichever call sets
// the mode.
func TestContainSetID(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	work := sandboxtest.Dir(t)
	methods := []string{"fchmodat", "setgid", "fchmod", "fchmodat2", "open", "mknod"}
	if runtime.GOARCH == "amd64" {
		methods = append(methods, "chmod")
	}
	// One contained run of one helper tries every method; each reports
	// on its own line.
	in, outDir := filepath.Join(work, "in"), filepath.Join(work, "out")
	for _, d := range []string{in, outDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o777)
	}
	out, output := run(t, Spec{Argv: append([]string{h, helperArg, "setid-all", in}, methods...), Writable: []string{work}})
	for _, m := range methods {
		if strings.Contains(output, "SETID "+m) || hostSetID(filepath.Join(in, m)) {
			t.Errorf("%s: a set-id file came out on the host", m)
		}
	}
	if n := strings.Count(output, "operation not permitted"); n != len(methods) || out.ExitCode != 0 {
		t.Errorf("want each of the %d methods refused with EPERM, got %d (exit %d):\n%s", len(methods), n, out.ExitCode, output)
	}
	got := control(t, work, append([]string{h, helperArg, "setid-all", outDir}, methods...)...)
	for _, m := range methods {
		if !strings.Contains(got, "SETID "+m) || !hostSetID(filepath.Join(outDir, m)) {
			t.Errorf("control: %s did not make a set-id file:\n%s", m, got)
		}
	}

	t.Run("cp and chmod 4755", func(t *testing.T) {
		script := "cp /usr/bin/id x && chmod 4755 x"
		out, output := run(t, Spec{Argv: []string{"sh", "-c", script}, Dir: work, Writable: []string{work}})
		if out.ExitCode == 0 || !strings.Contains(output, "Operation not permitted") {
			t.Errorf("contained: exit %d, want chmod refused with EPERM; output:\n%s", out.ExitCode, output)
		}
		if hostSetID(filepath.Join(work, "x")) {
			t.Error("the copy came out set-user-ID on the host")
		}
		os.Remove(filepath.Join(work, "x"))
		control(t, work, "sh", "-c", script)
		if !hostSetID(filepath.Join(work, "x")) {
			t.Error("control: the uncontained copy is not set-user-ID")
		}
	})

	t.Run("writable roots are nosuid and nodev", func(t *testing.T) {
		argv := []string{h, helperArg, "mount-allows-setid", work}
		out, output := run(t, Spec{Argv: argv, Writable: []string{work}})
		refused(t, out, output)
		if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
			t.Skipf("control skipped: %s is already mounted nosuid or nodev on the host", work)
		}
	})
}
