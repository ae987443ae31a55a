package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// setIDHelper (helper action "setid METHOD PATH") gives PATH a set-user-ID
// or set-group-ID mode through one system call, and succeeds when the file
// then carries the bit.
func setIDHelper(a []string) error {
	method, p := a[0], a[1]
	unix.Umask(0o022)
	existing := func() error {
		if _, err := os.Lstat(p); err == nil {
			return nil
		}
		return os.WriteFile(p, []byte("#!/bin/sh\nid\n"), 0o755)
	}
	var err error
	switch method {
	case "fchmodat": // what chmod(1) and os.Chmod use
		if err = existing(); err == nil {
			err = unix.Fchmodat(unix.AT_FDCWD, p, 0o4755, 0)
		}
	case "setgid":
		if err = existing(); err == nil {
			err = unix.Fchmodat(unix.AT_FDCWD, p, 0o2755, 0)
		}
	case "fchmod":
		if err = existing(); err == nil {
			var f *os.File
			if f, err = os.Open(p); err == nil {
				err = unix.Fchmod(int(f.Fd()), 0o4755)
				f.Close()
			}
		}
	case "fchmodat2":
		if err = existing(); err == nil {
			p0, _ := unix.BytePtrFromString(p)
			_, _, e := unix.Syscall6(452, ^uintptr(99) /* AT_FDCWD */, uintptr(unsafe.Pointer(p0)), 0o4755, 0, 0, 0)
			err = errnoErr(e)
		}
	case "chmod": // the legacy call, amd64 only
		if err = existing(); err == nil {
			p0, _ := unix.BytePtrFromString(p)
			nr := arch.X86_64.SyscallNames["chmod"] // the method runs on amd64 only
			_, _, e := unix.Syscall(uintptr(nr), uintptr(unsafe.Pointer(p0)), 0o4755, 0)
			err = errnoErr(e)
		}
	case "open":
		var fd int
		if fd, err = unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755); err == nil {
			unix.Close(fd)
		}
	case "mknod":
		err = unix.Mknodat(unix.AT_FDCWD, p, unix.S_IFREG|0o4755, 0)
	default:
		return fmt.Errorf("unknown method %q", method)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) == 0 {
		return fmt.Errorf("%s: %s has mode %v, no set-id bit", method, p, fi.Mode())
	}
	return nil
}

func init() {
	// setid-all DIR METHOD...: setid with each method on DIR/METHOD,
	// printing "SETID METHOD" for each that worked and the error of each
	// that did not; it always succeeds.
	moreHelpers["setid-all"] = func(a []string) error {
		for _, m := range a[1:] {
			if err := setIDHelper([]string{m, filepath.Join(a[0], m)}); err != nil {
				fmt.Printf("%s: %v\n", m, err)
			} else {
				fmt.Printf("SETID %s\n", m)
			}
		}
		return nil
	}
}

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
	work := outsideDir(t)
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
