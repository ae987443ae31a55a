package sandbox

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestContainHostInfo: with the network off, the host's listening unix
// sockets are out of reach wherever they are, /sys shows neither the
// host's network interfaces nor its firmware tables, the boot id is the
// run's own, and the ioh state directory (the trace database of the run
// the command serves) is hidden.
func TestContainHostInfo(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)

	t.Run("host unix socket in a writable root", func(t *testing.T) {
		work := sandboxtest.Dir(t)
		sock := filepath.Join(work, "daemon.sock")
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		os.Chmod(sock, 0o777)
		go func() { // echo server; ends when the listener closes
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { defer c.Close(); io.CopyN(c, c, 4) }()
			}
		}()
		argv := []string{h, helperArg, "unix", sock}
		out, output := run(t, Spec{Argv: argv, Writable: []string{work}})
		refused(t, out, output)
		control(t, "/", argv...)
	})

	t.Run("network interfaces in /sys", func(t *testing.T) {
		ents, err := os.ReadDir("/sys/class/net")
		if err != nil {
			t.Skipf("no /sys/class/net on this machine: %v", err)
		}
		var host []string
		for _, e := range ents {
			if e.Name() != "lo" {
				host = append(host, e.Name())
			}
		}
		if len(host) == 0 {
			t.Skip("control skipped: the host has no interface but lo, so hiding them cannot be shown")
		}
		out, output := run(t, Spec{Argv: []string{"sh", "-c", "ls /sys/class/net; cat /sys/class/net/*/address"}})
		if out.ExitCode != 0 {
			t.Fatalf("listing /sys/class/net inside failed: %s", output)
		}
		for _, n := range host {
			if strings.Contains(output, n) {
				t.Errorf("host interface %s visible inside:\n%s", n, output)
			}
			if mac, err := os.ReadFile(filepath.Join("/sys/class/net", n, "address")); err == nil && strings.TrimSpace(string(mac)) != "00:00:00:00:00:00" && strings.Contains(output, strings.TrimSpace(string(mac))) {
				t.Errorf("MAC of %s visible inside:\n%s", n, output)
			}
		}
	})

	t.Run("firmware tables", func(t *testing.T) {
		argv := []string{"sh", "-c", "test -n \"$(ls -A /sys/firmware)\""}
		out, output := run(t, Spec{Argv: argv})
		refused(t, out, output)
		control(t, "/", argv...)
	})

	t.Run("boot id", func(t *testing.T) {
		host, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
		if err != nil {
			t.Skipf("no boot id here: %v", err)
		}
		out, output := run(t, Spec{Argv: []string{"cat", "/proc/sys/kernel/random/boot_id"}})
		if out.ExitCode != 0 || len(strings.TrimSpace(output)) != 36 {
			t.Errorf("boot id inside: exit %d %q, want a UUID of the run's own", out.ExitCode, output)
		}
		if strings.Contains(output, strings.TrimSpace(string(host))) {
			t.Errorf("the host's boot id is visible inside: %s", output)
		}
	})

	for _, how := range []string{"IOH_STATE_DIR", "XDG_STATE_HOME", "HOME"} {
		t.Run("state directory via "+how, func(t *testing.T) {
			base := sandboxtest.Dir(t)
			var db string
			switch how {
			case "IOH_STATE_DIR":
				t.Setenv("IOH_STATE_DIR", base)
				db = filepath.Join(base, "trace.db")
			case "XDG_STATE_HOME":
				t.Setenv("IOH_STATE_DIR", "")
				t.Setenv("XDG_STATE_HOME", base)
				db = filepath.Join(base, "ioh", "trace.db")
			case "HOME":
				t.Setenv("IOH_STATE_DIR", "")
				t.Setenv("XDG_STATE_HOME", "")
				t.Setenv("HOME", base)
				db = filepath.Join(base, ".local", "state", "ioh", "trace.db")
			}
			if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(db, []byte("TRACE-OF-THIS-RUN\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// base is a writable root, which every read view shows: only
			// the mask can hide the database. The command runs from "/":
			// a working directory in a masked path is refused before the
			// run (TestWorkdirMaskedIsAClearError).
			argv := []string{"cat", db}
			out, output := run(t, Spec{Argv: argv, Dir: "/", Writable: []string{base}})
			if strings.Contains(output, "TRACE-OF-THIS-RUN") {
				t.Errorf("the trace database is readable inside:\n%s", output)
			}
			refused(t, out, output)
			if got := control(t, "/", argv...); !strings.Contains(got, "TRACE-OF-THIS-RUN") {
				t.Errorf("control read %q", got)
			}
		})
	}
}
