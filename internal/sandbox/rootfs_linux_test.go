package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// mountEntry is one line of /proc/PID/mountinfo.
type mountEntry struct {
	id, parent string
	point      string
	opts       string // per-mount options
}

func parseMountinfo(data string) []mountEntry {
	var out []mountEntry
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		out = append(out, mountEntry{id: f[0], parent: f[1], point: unescapeMount(f[4]), opts: f[5]})
	}
	return out
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// hiddenMounts lists the mounts of a mount table that no path reaches: one
// with another mount stacked on its own mount point, one with a later
// sibling mounted over a directory on its way, and everything below
// those. Each is a mount call that bought nothing.
func hiddenMounts(ms []mountEntry) []string {
	byID := map[string]mountEntry{}
	for _, m := range ms {
		byID[m.id] = m
	}
	// covered: another mount than m and except is stacked on m or
	// mounted over a directory on m's way from its parent.
	covered := func(m mountEntry, except string) bool {
		for _, n := range ms {
			if n.id == m.id || n.id == except {
				continue
			}
			if n.parent == m.id && n.point == m.point {
				return true
			}
			if n.parent == m.parent && n.point != m.point && view.Under(m.point, n.point) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, m := range ms {
		h := covered(m, "")
		for c := m; !h; {
			p, ok := byID[c.parent]
			if !ok || p.id == c.id {
				break
			}
			h, c = covered(p, c.id), p
		}
		if h {
			out = append(out, m.point)
		}
	}
	return out
}

// TestHiddenMountsDetector: the check below can fail. The table is the
// linux tier's old layout without network: the read view's binds under
// /sys (and /sys/fs/cgroup's own submounts) lay under the fresh sysfs.
func TestHiddenMountsDetector(t *testing.T) {
	old := `200 150 0:40 / / ro,nosuid,nodev - tmpfs tmpfs ro
201 200 0:22 /devices/system/cpu /sys/devices/system/cpu ro,nosuid,nodev - sysfs sysfs rw
202 200 0:28 / /sys/fs/cgroup ro,nosuid,nodev - tmpfs tmpfs rw
203 202 0:29 / /sys/fs/cgroup/cpu ro,nosuid,nodev - cgroup cgroup rw,cpu
204 200 0:30 / /usr ro,nosuid,nodev - ext4 /dev/vda rw
205 200 0:44 / /proc rw,nosuid,nodev,noexec - proc proc rw
206 205 0:44 /sys /proc/sys ro,nosuid,nodev,noexec - proc proc rw
207 200 0:49 / /sys ro,nosuid,nodev,noexec - sysfs sysfs ro
208 207 0:42 /dir /sys/firmware ro,nosuid,nodev,noexec - tmpfs tmpfs rw
209 204 0:42 /file /usr/secret ro,nosuid,nodev,noexec - tmpfs tmpfs rw
210 209 0:42 /file /usr/secret ro,nosuid,nodev,noexec - tmpfs tmpfs rw`
	got := strings.Join(hiddenMounts(parseMountinfo(old)), " ")
	if want := "/sys/devices/system/cpu /sys/fs/cgroup /sys/fs/cgroup/cpu /usr/secret"; got != want {
		t.Errorf("hidden mounts %q, want %q", got, want)
	}
}

// TestRootMountsAllShow: without network, every mount of the linux tier's
// private root is reachable (TestHiddenMountsDetector shows the old
// layout failing this); with network, /sys/fs/cgroup is still the host's
// (read-only), since no fresh sysfs covers it.
func TestRootMountsAllShow(t *testing.T) {
	requireLinuxBackend(t)
	out, output := run(t, Spec{Argv: []string{"cat", "/proc/self/mountinfo"}})
	if out.ExitCode != 0 {
		t.Fatalf("reading the mount table inside failed: %s", output)
	}
	ms := parseMountinfo(output)
	if len(ms) < 5 {
		t.Fatalf("mount table inside has %d entries:\n%s", len(ms), output)
	}
	if h := hiddenMounts(ms); len(h) > 0 {
		t.Errorf("mounts no path reaches inside the sandbox: %q\n%s", h, output)
	}
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		t.Skipf("no /sys/fs/cgroup here: %v", err)
	}
	out, output = run(t, Spec{Argv: []string{"cat", "/proc/self/mountinfo"}, Network: true})
	if out.ExitCode != 0 {
		t.Fatalf("reading the mount table inside (network on) failed: %s", output)
	}
	found := false
	for _, m := range parseMountinfo(output) {
		if m.point == "/sys/fs/cgroup" {
			found = true
			if !strings.HasPrefix(m.opts, "ro,") {
				t.Errorf("/sys/fs/cgroup inside is not read-only: %s", m.opts)
			}
		}
	}
	if !found {
		t.Errorf("with network on, /sys/fs/cgroup is not bound in:\n%s", output)
	}
}

// TestRootMasksAreSealed: each mask (a directory, a file, in a writable
// root and in /etc) and the boot id are mounts that are read-only, nosuid,
// nodev and noexec, bound from the one sealed source; writing through a
// masked file fails inside and works outside (control).
func TestRootMasksAreSealed(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	home := sandboxtest.Dir(t)
	t.Setenv("HOME", home) // the masks follow the user's home
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	netrc := filepath.Join(home, ".netrc")
	if err := os.WriteFile(netrc, []byte("machine x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	out, output := run(t, Spec{Argv: []string{"cat", "/proc/self/mountinfo"}, Writable: []string{home}})
	if out.ExitCode != 0 {
		t.Fatalf("reading the mount table inside failed: %s", output)
	}
	want := []string{filepath.Join(home, ".ssh"), netrc, "/proc/sys/kernel/random/boot_id"}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		want = append(want, "/etc/shadow")
	}
	ms := parseMountinfo(output)
	for _, p := range want {
		var opts string
		for _, m := range ms {
			if m.point == p {
				opts = m.opts // the last one is the topmost
			}
		}
		if opts == "" {
			t.Errorf("%s is not masked by a mount inside:\n%s", p, output)
			continue
		}
		for _, o := range []string{"ro", "nosuid", "nodev", "noexec"} {
			if !strings.Contains(","+opts+",", ","+o+",") {
				t.Errorf("the mask on %s is mounted %s, want %s too", p, opts, o)
			}
		}
	}
	argv := []string{h, helperArg, "write", netrc}
	out, output = run(t, Spec{Argv: argv, Writable: []string{home}})
	refused(t, out, output)
	control(t, "/", argv...)
}

// TestContainHomeAtHostPath: in the linux tier the command's HOME is the
// host's HOME path, as on the host (a check that passes only where HOME
// looks like the sandbox's fails inside as it would outside), but it is a
// private empty directory: a host file there is not readable, what the
// command writes there does not reach the host, and the workspace below
// the home is still there and writable. Control: the host file is
// readable uncontained.
func TestContainHomeAtHostPath(t *testing.T) {
	requireLinuxBackend(t)
	w := newWorld(t) // tier_contain_linux_test.go: HOME holds the workspace
	secret := filepath.Join(w.home, ".home-secret")
	if err := os.WriteFile(secret, []byte(w.marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.work, "in-work.txt"), []byte("work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// env, started directly, prints every entry of the command's
	// environment: one HOME, the host's (libc and Go take the first of
	// duplicate entries, a shell the last).
	_, envOut := run(t, Spec{Argv: []string{"env"}, Dir: w.work, Writable: []string{w.work}})
	if !strings.Contains(envOut, "\nHOME="+w.home+"\n") || strings.Count(envOut, "\nHOME=") != 1 {
		t.Errorf("the environment inside does not hold one HOME, the host's %s:\n%s", w.home, envOut)
	}
	script := `cat "$HOME/.home-secret"; echo made >"$HOME/.made" && cat "$HOME/.made"; cat "$HOME/src/proj/in-work.txt" && echo w >"$HOME/src/proj/out.txt"`
	out, output := run(t, Spec{Argv: []string{"sh", "-c", script}, Dir: w.work, Writable: []string{w.work}})
	if strings.Contains(output, w.marker) {
		t.Errorf("a host file in HOME was read inside:\n%s", output)
	}
	if !strings.Contains(output, "made\n") || !strings.Contains(output, "work\n") {
		t.Errorf("HOME is not writable inside, or the workspace below it is gone (exit %d):\n%s", out.ExitCode, output)
	}
	if _, err := os.Stat(filepath.Join(w.home, ".made")); err == nil {
		t.Error("what the command wrote to HOME reached the host's home")
	}
	if b, err := os.ReadFile(filepath.Join(w.work, "out.txt")); err != nil || string(b) != "w\n" {
		t.Errorf("the workspace below HOME was not written through: %q %v", b, err)
	}
	if !hasMechanism(out, "home", StateApplied) {
		t.Errorf("no home mechanism: %+v", out.Mechanisms)
	}
	if got := control(t, w.work, "cat", secret); !strings.Contains(got, w.marker) {
		t.Fatalf("uncontained control did not read %s: %q", secret, got)
	}
}
