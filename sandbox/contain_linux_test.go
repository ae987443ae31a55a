package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// run runs argv contained under the Linux backend and returns the outcome
// and the combined output.
func run(t *testing.T, s Spec) (*Outcome, string) {
	t.Helper()
	var buf bytes.Buffer
	s.Stdout, s.Stderr = &buf, &buf
	if s.Backend == "" {
		s.Backend = BackendLinux
	}
	out, err := NewRunner(nil).Run(context.Background(), &s)
	if err != nil {
		t.Fatalf("contained %q: %v", s.Argv, err)
	}
	return out, buf.String()
}

// control runs argv uncontained, with the parent's environment; it must
// succeed or the paired containment case proves nothing.
func control(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("uncontained control %q failed, so its containment case would prove nothing: %v\n%s", argv, err, out)
	}
	return string(out)
}

func requireLinuxBackend(t *testing.T) {
	t.Helper()
	if _, err := (linuxBackend{}).probe(context.Background()); err != nil {
		t.Skipf("the Linux backend cannot run on this machine: %v", err)
	}
}

func isRoot() bool { return os.Getuid() == 0 }

// refused asserts a contained run failed without a cap or signal doing it.
func refused(t *testing.T, out *Outcome, output string) {
	t.Helper()
	if out.ExitCode == 0 {
		t.Errorf("contained run succeeded, want it refused; output:\n%s", output)
	}
}

func TestContainFilesystem(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	work := outsideDir(t) // the writable root
	outside := outsideDir(t)
	home, _ := os.UserHomeDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("original\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(work, "escape")); err != nil {
		t.Fatal(err)
	}
	uniq := fmt.Sprintf("ioh-sandbox-probe-%d", os.Getpid())
	type tc struct {
		name     string
		argv     []string
		cleanup  string // file the control creates
		rootOnly string // reason the control cannot succeed unprivileged
	}
	cases := []tc{
		{name: "absolute path", argv: []string{h, helperArg, "write", filepath.Join(outside, "abs.txt")}, cleanup: filepath.Join(outside, "abs.txt")},
		{name: "via symlink", argv: []string{h, helperArg, "write", filepath.Join(work, "escape", "sym.txt")}, cleanup: filepath.Join(outside, "sym.txt")},
		{name: "via hardlink", argv: []string{h, helperArg, "link", secret, filepath.Join(work, "hard.txt")}, cleanup: filepath.Join(work, "hard.txt")},
		{name: "into HOME", argv: []string{h, helperArg, "write", filepath.Join(home, uniq)}, cleanup: filepath.Join(home, uniq)},
		{name: "into /etc", argv: []string{h, helperArg, "write", filepath.Join("/etc", uniq)}, cleanup: filepath.Join("/etc", uniq), rootOnly: "only root can write /etc outside the sandbox"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, output := run(t, Spec{Argv: c.argv, Writable: []string{work}})
			refused(t, out, output)
			if c.rootOnly != "" && !isRoot() {
				t.Skipf("control skipped: %s", c.rootOnly)
			}
			control(t, work, c.argv...)
			os.Remove(c.cleanup)
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "original\n" {
		// the hardlink control appended through its link; restore
		os.WriteFile(secret, []byte("original\n"), 0o666)
	}

	t.Run("/tmp is private", func(t *testing.T) {
		p := filepath.Join("/tmp", uniq)
		out, output := run(t, Spec{Argv: []string{"sh", "-c", "echo x > " + p + " && cat " + p}, Writable: []string{work}})
		if out.ExitCode != 0 {
			t.Fatalf("writing the private /tmp failed: %s", output)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written in the sandbox appeared on the host: %v", p, err)
		}
		control(t, work, "sh", "-c", "echo x > "+p)
		os.Remove(p)
	})

	t.Run("writable root works", func(t *testing.T) {
		p := filepath.Join(work, "ok.txt")
		out, output := run(t, Spec{Argv: []string{h, helperArg, "write", p}, Writable: []string{work}})
		if out.ExitCode != 0 {
			t.Fatalf("writing the writable root failed: %s", output)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("write to the writable root did not reach the host: %v", err)
		}
	})
}

func TestContainSecrets(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	home := outsideDir(t)
	t.Setenv("HOME", home) // the masks follow the user's home
	for _, p := range []string{".ssh/id_ed25519", ".aws/credentials", ".netrc"} {
		full := filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(full), 0o700)
		if err := os.WriteFile(full, []byte("TOP-SECRET\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]string{
		"~/.ssh":      filepath.Join(home, ".ssh/id_ed25519"),
		"~/.aws":      filepath.Join(home, ".aws/credentials"),
		"~/.netrc":    filepath.Join(home, ".netrc"),
		"/etc/shadow": "/etc/shadow",
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			argv := []string{h, helperArg, "read", p}
			out, output := run(t, Spec{Argv: argv, Writable: []string{home}})
			if strings.Contains(output, "TOP-SECRET") || strings.Contains(output, "root:") {
				t.Errorf("secret leaked:\n%s", output)
			}
			refused(t, out, output)
			if p == "/etc/shadow" && !isRoot() {
				t.Skip("control skipped: only root can read /etc/shadow outside the sandbox")
			}
			control(t, "/", argv...)
		})
	}

	t.Run("inherited descriptors stay out", func(t *testing.T) {
		// A descriptor the caller holds without close-on-exec (say, one
		// its own parent leaked) must not reach the command.
		fd, err := unix.Open(filepath.Join(home, ".netrc"), unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Dup2(fd, 100); err != nil {
			t.Fatal(err)
		}
		defer unix.Close(100)
		argv := []string{"sh", "-c", "cat /proc/self/fd/100"}
		out, output := run(t, Spec{Argv: argv})
		if strings.Contains(output, "TOP-SECRET") {
			t.Errorf("inherited descriptor leaked the secret:\n%s", output)
		}
		refused(t, out, output)
		if got := control(t, "/", argv...); !strings.Contains(got, "TOP-SECRET") {
			t.Errorf("control did not inherit the descriptor: %q", got)
		}
	})

	t.Run("API keys stay out", func(t *testing.T) {
		for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "MY_SECRET"} {
			t.Setenv(k, "sk-do-not-leak-"+k)
		}
		out, output := run(t, Spec{Argv: []string{"sh", "-c", "env; cat /proc/1/environ; cat /proc/$$/environ"}})
		if out.ExitCode != 0 || strings.Contains(output, "sk-do-not-leak") {
			t.Errorf("exit %d; output:\n%s", out.ExitCode, output)
		}
		if got := control(t, "/", "env"); !strings.Contains(got, "sk-do-not-leak") {
			t.Error("control did not see the keys")
		}
		if _, err := NewRunner(nil).Run(context.Background(), &Spec{Argv: []string{"true"}, Env: []string{"X_API_KEY=1"}}); !errors.Is(err, ErrSecretEnv) {
			t.Errorf("secret in Spec.Env: err %v, want ErrSecretEnv", err)
		}
	})
}

// echoServers starts TCP, UDP and unix-socket echo listeners and a tiny DNS
// server on the host loopback.
func echoServers(t *testing.T, sockDir string) (tcpAddr, udpAddr, dnsAddr, sock string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go acceptEcho(ln) // ends when the listener closes
	sock = filepath.Join(sockDir, "echo.sock")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o777)
	t.Cleanup(func() { uln.Close() })
	go acceptEcho(uln)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() { // ends when the socket closes
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:n], from)
		}
	}()
	dns, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	go serveDNS(dns)
	return ln.Addr().String(), pc.LocalAddr().String(), dns.LocalAddr().String(), sock
}

func acceptEcho(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { // ends when the peer closes
			defer c.Close()
			buf := make([]byte, 4)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				c.Write(buf[:n])
			}
		}()
	}
}

func TestContainNetwork(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	sockDir := "/run"
	if !isRoot() {
		sockDir = outsideDir(t)
	} else {
		d, err := os.MkdirTemp("/run", "ioh-sandbox-sock-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		os.Chmod(d, 0o755)
		sockDir = d
	}
	tcpAddr, udpAddr, dnsAddr, sock := echoServers(t, sockDir)
	cases := []struct {
		name, skip string
		argv       []string
	}{
		{name: "tcp loopback", argv: []string{h, helperArg, "tcp", tcpAddr}},
		{name: "udp loopback", argv: []string{h, helperArg, "udp", udpAddr}},
		{name: "dns", argv: []string{h, helperArg, "dns", dnsAddr, "example.com"}},
		{name: "host unix socket", argv: []string{h, helperArg, "unix", sock}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "host unix socket" && !isRoot() {
				t.Skip("pathname sockets outside /run are reachable read-only until Landlock ABI 9; unprivileged tests cannot listen in /run")
			}
			out, output := run(t, Spec{Argv: c.argv})
			refused(t, out, output)
			control(t, "/", c.argv...)
		})
	}
	t.Run("network on request", func(t *testing.T) {
		out, output := run(t, Spec{Argv: []string{h, helperArg, "tcp", tcpAddr}, Network: true})
		if out.ExitCode != 0 {
			t.Errorf("with Network the loopback listener was unreachable: %s", output)
		}
	})
}

func TestContainProcesses(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	victim := exec.Command("sleep", "600")
	victim.Env = append(os.Environ(), "IOH_VICTIM_MARK=host-process-secret")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	pid := fmt.Sprint(victim.Process.Pid)
	cases := []struct {
		name string
		argv []string
	}{
		{"see", []string{"test", "-d", "/proc/" + pid}},
		{"signal", []string{h, helperArg, "kill", pid}},
		{"ptrace", []string{h, helperArg, "ptrace", pid}},
		{"environ", []string{h, helperArg, "read", "/proc/" + pid + "/environ"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, output := run(t, Spec{Argv: c.argv})
			if strings.Contains(output, "host-process-secret") {
				t.Errorf("host environment leaked:\n%s", output)
			}
			refused(t, out, output)
			control(t, "/", c.argv...)
		})
	}

	t.Run("signalling the sandbox's PID 1 does not cut the run short", func(t *testing.T) {
		out, output := run(t, Spec{Argv: []string{"sh", "-c", "kill -TERM 1; kill -INT 1; kill -HUP 1; sleep 0.2; exit 4"}})
		if out.ExitCode != 4 || out.Signal != "" {
			t.Errorf("exit %d signal %q, want the command's own exit 4; output:\n%s", out.ExitCode, out.Signal, output)
		}
	})

	t.Run("mount unshare chroot", func(t *testing.T) {
		dir := outsideDir(t)
		for _, argv := range [][]string{
			{"mount", "-t", "tmpfs", "none", dir},
			{"unshare", "-r", "true"},
			{"unshare", "-U", "-m", "true"},
			{"chroot", "/", "true"},
		} {
			out, output := run(t, Spec{Argv: argv})
			refused(t, out, output)
			if argv[0] != "unshare" && !isRoot() {
				continue // unprivileged, the control itself would be refused
			}
			control(t, "/", argv...)
			if argv[0] == "mount" {
				exec.Command("umount", dir).Run()
			}
		}
	})

	t.Run("daemon does not survive", func(t *testing.T) {
		if _, err := exec.LookPath("pgrep"); err != nil {
			t.Skip("needs pgrep (procps)")
		}
		off := os.Getpid() % 99999
		mark := fmt.Sprint(900000 + off)
		// The script computes the mark so that only the daemon's own
		// command line carries it, and returns once the daemon runs.
		script := fmt.Sprintf(`m=$((900000 + %d)); setsid sleep $m >/dev/null 2>&1 </dev/null &
for i in $(seq 200); do pgrep -f "^sleep $m\$" >/dev/null && exit 0; sleep 0.02; done; exit 1`, off)
		out, output := run(t, Spec{Argv: []string{"sh", "-c", script}})
		if out.ExitCode != 0 {
			t.Fatalf("contained daemon did not start: %s", output)
		}
		if pids := findProcs("sleep\x00" + mark); len(pids) > 0 {
			t.Errorf("daemonised process outlived the run: pids %v", pids)
		}
		// Control: uncontained, the same daemon survives its parent.
		control(t, "/", "sh", "-c", script)
		pids := findProcs("sleep\x00" + mark)
		for _, p := range pids {
			if pr, err := os.FindProcess(p); err == nil {
				pr.Kill()
			}
		}
		if len(pids) == 0 {
			t.Error("control: the uncontained daemon did not survive either, so the case proves nothing")
		}
	})
}

// findProcs lists host pids whose command line contains needle.
func findProcs(needle string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(b, []byte(needle)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestContainSyscalls(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	for _, name := range []string{"io_uring_setup", "bpf", "keyctl", "perf_event_open", "clone_newuser"} {
		t.Run(name, func(t *testing.T) {
			argv := []string{h, helperArg, "syscall", name}
			out, output := run(t, Spec{Argv: argv})
			refused(t, out, output)
			if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
				t.Skipf("control skipped: %s is refused outside the sandbox too on this machine (%v)", name, err)
			}
		})
	}
}

func TestContainCaps(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	cases := []struct {
		name    string
		argv    []string
		limits  Limits
		wantCap string // "" when only rlimits apply and the cap shows as a failure
	}{
		{"fork bomb under process cap", []string{h, helperArg, "spawn", "60"}, Limits{Procs: 30}, CapProcesses},
		{"memory bomb under memory cap", []string{h, helperArg, "alloc", fmt.Sprint(256 << 20)}, Limits{Memory: 64 << 20}, CapMemory},
		{"cpu loop under wall cap", []string{h, helperArg, "spin", "400ms"}, Limits{Wall: 150 * time.Millisecond}, CapWall},
		{"cpu loop under cpu cap", []string{h, helperArg, "spin", "1200ms"}, Limits{CPU: time.Second}, CapCPU},
		{"output flood", []string{"head", "-c", "4000000", "/dev/zero"}, Limits{Output: 64 << 10}, CapOutput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, output := run(t, Spec{Argv: c.argv, Limits: c.limits})
			refused(t, out, output)
			cgroupCap := c.wantCap == CapProcesses || c.wantCap == CapMemory
			if !cgroupCap || cgroupWritable() {
				if out.CapHit != c.wantCap {
					t.Errorf("cap hit %q, want %q (exit %d, signal %q)", out.CapHit, c.wantCap, out.ExitCode, out.Signal)
				}
			}
			if c.wantCap == CapOutput && (!out.Truncated || len(output) != 64<<10) {
				t.Errorf("output flood kept %d bytes (truncated %v), want %d", len(output), out.Truncated, 64<<10)
			}
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			if err := cmd.Run(); err != nil {
				t.Fatalf("uncontained control failed, so the case proves nothing: %v", err)
			}
		})
	}
}

// cgroupWritable reports whether this process can create v1 (or delegated
// v2) groups, i.e. whether caps are reported as cgroup events.
func cgroupWritable() bool {
	cg, _ := newCgroup(Limits{Procs: 10})
	defer cg.remove()
	return cg != nil
}

func TestToolchainInside(t *testing.T) {
	requireLinuxBackend(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	mod := outsideDir(t)
	// The host's own caches, writable, as an agent's config gives them;
	// a cold cache would rebuild the standard library.
	cacheOut, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	caches := strings.Fields(string(cacheOut))
	if len(caches) != 2 {
		t.Fatalf("go env printed %q", cacheOut)
	}
	for _, c := range caches {
		if err := os.MkdirAll(c, 0o755); err != nil {
			t.Skipf("cache %s not writable here: %v", c, err)
		}
	}
	files := map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.21\n",
		"tiny.go":      "package tiny\n\nfunc Add(a, b int) int { return a + b }\n",
		"tiny_test.go": "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(mod, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"GOCACHE=" + caches[0], "GOMODCACHE=" + caches[1], "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOTELEMETRY=off"}
	out, output := run(t, Spec{Argv: []string{goBin, "test", "-count=1", "./..."}, Dir: mod, Writable: caches, Env: env, Limits: Limits{Wall: 2 * time.Minute}})
	if out.ExitCode != 0 || !strings.Contains(output, "ok") {
		t.Fatalf("go test inside the sandbox: exit %d\n%s", out.ExitCode, output)
	}
	// The module directory itself was read-only: nothing was written there.
	ents, _ := os.ReadDir(mod)
	if len(ents) != len(files) {
		t.Errorf("module directory has %d entries, want the %d it started with", len(ents), len(files))
	}
}
