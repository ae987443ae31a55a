package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

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
		dir := sandboxtest.Dir(t)
		for _, argv := range [][]string{
			{"mount", "-t", "tmpfs", "none", dir},
			{"unshare", "-r", "true"},
			{"unshare", "-U", "-m", "true"},
			{"chroot", "/", "true"},
		} {
			out, output := run(t, Spec{Argv: argv})
			refused(t, out, output)
			if argv[0] != "unshare" && !sandboxtest.IsRoot() {
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
		script, mark := daemonScript(0)
		out, output := run(t, Spec{Argv: []string{"sh", "-c", script}})
		if out.ExitCode != 0 {
			t.Fatalf("contained daemon did not start: %s", output)
		}
		if pids := findProcs("sleep\x00" + mark); len(pids) > 0 {
			t.Errorf("daemonised process outlived the run: pids %v", pids)
		}
		daemonOutlivesUncontained(t, script, mark)
	})
}

// daemonScript is a shell script that starts a daemon (setsid sleep) and
// returns once it runs, and the mark only the daemon's command line
// carries (the script computes it); salt keeps tests' marks apart.
func daemonScript(salt int) (script, mark string) {
	off := os.Getpid()%99999 + salt
	script = fmt.Sprintf(`m=$((900000 + %d)); setsid sleep $m >/dev/null 2>&1 </dev/null &
for i in $(seq 1500); do pgrep -f "^sleep $m\$" >/dev/null && exit 0; sleep 0.02; done; exit 1`, off)
	return script, fmt.Sprint(900000 + off)
}

// daemonOutlivesUncontained is the control of a daemon case: run
// uncontained, the script's daemon outlives its parent (it is killed
// after).
func daemonOutlivesUncontained(t *testing.T, script, mark string) {
	t.Helper()
	control(t, "/", "sh", "-c", script)
	pids := findProcs("sleep\x00" + mark)
	for _, p := range pids {
		if pr, err := os.FindProcess(p); err == nil {
			pr.Kill()
		}
	}
	if len(pids) == 0 {
		t.Error("control: the uncontained daemon did not outlive its parent, so the case proves nothing")
	}
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
	cg, _ := newCgroup(nil, Limits{Procs: 10})
	defer cg.Remove()
	return cg != nil
}

func TestToolchainInside(t *testing.T) {
	requireLinuxBackend(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	mod := sandboxtest.Dir(t)
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
