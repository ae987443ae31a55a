package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// awaitStageWaitsForConfig waits until the stage pid's main thread sleeps
// in its read of the config (fd 3): everything it does before its config,
// the view bound from its hint included, is done.
func awaitStageWaitsForConfig(t *testing.T, pid int) {
	t.Helper()
	want := strconv.Itoa(unix.SYS_READ) + " 0x3 "
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/syscall")
		if err != nil {
			t.Fatalf("stage %d: %v", pid, err)
		}
		if strings.HasPrefix(string(b), want) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("the warm stage %d never waited for its config", pid)
}

// boundAhead reports whether the run's private root was the one its
// stage bound ahead from the hint.
func boundAhead(t *testing.T, out *Outcome) bool {
	t.Helper()
	for _, m := range out.Mechanisms {
		if m.Name == "read-view" {
			return strings.Contains(m.Detail, "bound ahead")
		}
	}
	t.Fatalf("no read-view mechanism in %+v", out.Mechanisms)
	return false
}

// TestWarmStageRootHint: a warm linux-tier stage binds the view of the
// run before it ahead, and the next run with the same view takes it and
// reads through it; a readable directory replaced after the stage bound
// it (same path, another directory) makes the run bind its view from its
// config and read the new directory, not the one bound ahead; a run with
// another view does the same.
func TestWarmStageRootHint(t *testing.T) {
	w, shared := warmPID1World(t)
	if err := os.WriteFile(filepath.Join(shared, "mark"), []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Argv: []string{"cat", filepath.Join(shared, "mark")}, Dir: w.work, Writable: []string{w.work}, View: testView(shared)}
	kind := kindOf(BackendLinux)
	// The first run starts cold and leaves a warm stage with its view.
	if out, output := run(t, spec); out.ExitCode != 0 || output != "first" {
		t.Fatalf("first run: exit %d: %q", out.ExitCode, output)
	}
	awaitStageWaitsForConfig(t, waitWarm(t, kind))
	out, output := run(t, spec)
	if out.ExitCode != 0 || output != "first" {
		t.Fatalf("second run: exit %d: %q", out.ExitCode, output)
	}
	if !boundAhead(t, out) {
		t.Errorf("the second run, with the first one's view, did not take the view bound ahead: %+v", out.Mechanisms)
	}

	// The next stage has bound the view, with the directory as it is now.
	awaitStageWaitsForConfig(t, waitWarm(t, kind))
	if err := os.Rename(shared, shared+".old"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared + ".old") })
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "mark"), []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, output = run(t, spec)
	if out.ExitCode != 0 || output != "second" || boundAhead(t, out) {
		t.Errorf("after the readable directory was replaced: exit %d, read %q, bound ahead %v; want the new directory's %q", out.ExitCode, output, boundAhead(t, out), "second")
	}
	if got := control(t, w.work, "cat", filepath.Join(shared, "mark")); got != "second" {
		t.Fatalf("control read %q", got)
	}

	// Another view.
	other := sandboxtest.Dir(t)
	if err := os.WriteFile(filepath.Join(other, "mark"), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	awaitStageWaitsForConfig(t, waitWarm(t, kind))
	o := spec
	o.Argv, o.View = []string{"cat", filepath.Join(other, "mark")}, testView(other)
	out, output = run(t, o)
	if out.ExitCode != 0 || output != "other" || boundAhead(t, out) {
		t.Errorf("a run with another view: exit %d, read %q, bound ahead %v", out.ExitCode, output, boundAhead(t, out))
	}
}

// TestMountsUnderMask: a run that mounts a writable root, its stage or a
// scratch layer at or below one of its masked paths cannot take masks
// bound ahead (its own build masks after it mounts, hiding the mount).
func TestMountsUnderMask(t *testing.T) {
	for _, c := range []struct {
		cfg  initConfig
		want bool
	}{
		{initConfig{Writable: []string{"/home/u/src"}, Masked: []string{"/home/u/.ssh", "/home/u/src/.env"}}, false},
		{initConfig{Writable: []string{"/home/u/.ssh/work"}, Masked: []string{"/home/u/.ssh"}}, true},
		{initConfig{Writable: []string{"/home/u/.ssh"}, Masked: []string{"/home/u/.ssh"}}, true},
		{initConfig{StageLower: "/srv/secret/repo", Masked: []string{"/srv/secret"}}, true},
		{initConfig{Scratch: []string{"/home/u/.cache/x"}, Masked: []string{"/home/u/.cache"}}, true},
		{initConfig{Writable: []string{"/home/u/.sshx"}, Masked: []string{"/home/u/.ssh"}}, false},
	} {
		if got := mountsUnderMask(&c.cfg); got != c.want {
			t.Errorf("%+v: %v, want %v", c.cfg, got, c.want)
		}
	}
}

// TestWarmStageMasksAhead: a warm stage masks the hinted run's masked
// paths that fall in its view ahead; the next run with the same view and
// masks cannot read the masked file, and when the file is replaced after
// the stage masked it (renamed away, a new one written at its path: the
// mask stays on the old one), the run masks the new one too, and cannot
// read it either. Control: the new file is readable outside.
func TestWarmStageMasksAhead(t *testing.T) {
	w, shared := warmPID1World(t)
	secret := filepath.Join(shared, "secret")
	if err := os.WriteFile(secret, []byte("FIRST-"+w.marker), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Argv: []string{"sh", "-c", "cat " + secret + "; echo end"}, Dir: w.work, Writable: []string{w.work},
		View: testMaskedView([]string{secret}, shared)}
	kind := kindOf(BackendLinux)
	check := func(name string, wantAhead bool) {
		t.Helper()
		out, output := run(t, spec)
		if !strings.Contains(output, "end") || strings.Contains(output, w.marker) {
			t.Errorf("%s: exit %d, read the masked file:\n%s", name, out.ExitCode, output)
		}
		if got := boundAhead(t, out); wantAhead && !got {
			t.Errorf("%s: not bound ahead", name)
		}
	}
	check("first run", false)
	awaitStageWaitsForConfig(t, waitWarm(t, kind))
	check("second run", true)

	awaitStageWaitsForConfig(t, waitWarm(t, kind))
	if err := os.Rename(secret, secret+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("SECOND-"+w.marker), 0o644); err != nil {
		t.Fatal(err)
	}
	check("after the masked file was replaced", true)
	if got := control(t, w.work, "cat", secret); !strings.Contains(got, "SECOND-"+w.marker) {
		t.Fatalf("control read %q", got)
	}
}

// warmPID1World sets a test up for warm linux-tier stages that are PID 1
// itself (onlyPID1) and returns its world and a directory outside it.
func warmPID1World(t *testing.T) (*world, string) {
	t.Helper()
	requireLinuxBackend(t)
	onlyPID1(t)
	useReexec(t)
	keepWarm(t) // warm_linux_test.go
	return newWorld(t), sandboxtest.Dir(t)
}

// onlyPID1 makes the test's linux-tier runs start PID 1 itself, never the
// spawn stage (which large callers such as a race-enabled test use).
func onlyPID1(t *testing.T) {
	old := spawnerThreshold
	spawnerThreshold = 1 << 62
	t.Cleanup(func() { spawnerThreshold = old })
}
