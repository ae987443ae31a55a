package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// userXattrs reports whether dir's filesystem takes user.* extended
// attributes, and why not.
func userXattrs(dir string) error {
	p := filepath.Join(dir, ".xattr-probe")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		return err
	}
	defer os.Remove(p)
	return unix.Setxattr(p, "user.ioh-probe", []byte("1"), 0)
}

// metaCases are the containment table's metadata cases (tier_contain_linux_test.go):
// a file the caller owns in its HOME, outside every writable root, must
// keep its mode, times and extended attributes.
func (w *world) metaCases(t *testing.T, h string) []tierCase {
	t.Helper()
	p := filepath.Join(w.home, ".ssh", "id_meta")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mode := func() os.FileMode { fi, _ := os.Stat(p); return fi.Mode().Perm() }
	old := time.Now().Add(-time.Minute)
	os.Chtimes(p, old, old)
	year := func() int { fi, _ := os.Stat(p); return fi.ModTime().Year() }
	cs := []tierCase{
		{name: "chmod a file outside the roots", argv: []string{"chmod", "0644", p},
			landed: func() bool { return mode() != 0o600 }, cleanup: func() { os.Chmod(p, 0o600) }},
		{name: "touch -m a file outside the roots", argv: []string{"touch", "-m", "-d", "2001-01-01", p},
			landed: func() bool { return year() == 2001 }, cleanup: func() { os.Chtimes(p, old, old) }},
		{name: "chmod a file outside the roots through a dirfd", argv: []string{h, helperArg, "fchmodat", filepath.Dir(p), filepath.Base(p), "0644"},
			landed: func() bool { return mode() != 0o600 }, cleanup: func() { os.Chmod(p, 0o600) }},
	}
	if err := userXattrs(filepath.Dir(p)); err != nil {
		t.Logf("case setxattr left out: the filesystem of %s takes no user.* extended attributes (%v)", p, err)
		return cs
	}
	has := func() bool { _, err := unix.Getxattr(p, "user.ioh", nil); return err == nil }
	return append(cs, tierCase{name: "setxattr a file outside the roots", argv: []string{h, helperArg, "setxattr", p, "user.ioh", "x"},
		landed: has, cleanup: func() { unix.Removexattr(p, "user.ioh") }})
}

// TestLandlockMetadata: in the landlock tier, chmod, utimes and extended
// attributes work inside the writable roots and the private TMPDIR (a
// build that chmods its outputs keeps working) and are refused on a
// protected directory of a writable root, through a symlink inside a root
// that points outside, on a descriptor of a readable file outside the
// roots, and through a dirfd outside; each refusal with its uncontained
// control.
func TestLandlockMetadata(t *testing.T) {
	tiersHere(t)
	h := helperPath(t)
	home := sandboxtest.Dir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("IOH_STATE_DIR", filepath.Join(home, "state"))
	work := filepath.Join(home, "src", "proj")
	readable := sandboxtest.Dir(t)
	mk := func(p string, mode os.FileMode) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	hook := mk(filepath.Join(work, ".git", "hooks", "pre-commit"), 0o644)
	build := mk(filepath.Join(work, "build.sh"), 0o644)
	sub := mk(filepath.Join(work, "sub", "out.bin"), 0o644)
	target := mk(filepath.Join(home, "notes.txt"), 0o600)
	shared := mk(filepath.Join(readable, "shared.txt"), 0o644)
	if err := os.Symlink(target, filepath.Join(work, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	perm := func(p string) os.FileMode { fi, _ := os.Stat(p); return fi.Mode().Perm() }

	run := func(argv ...string) (*Outcome, string) {
		return runTier(t, Spec{Argv: argv, Dir: work, Writable: []string{work}, View: testView(filepath.Dir(h), readable), Backend: BackendLandlock})
	}
	first, _ := run("true")
	wantSupervised(t, first)

	xattrs := userXattrs(work)
	t.Run("allowed inside", func(t *testing.T) {
		script := `set -e
chmod +x build.sh
test -x build.sh
touch -m -d 2002-02-02 build.sh
"$H" ` + helperArg + ` fchmodat sub out.bin 0600
"$H" ` + helperArg + ` fchmod build.sh 0700
touch "$TMPDIR/t"
chmod 0700 "$TMPDIR/t"
test -x "$TMPDIR/t"
touch -m -d 2003-03-03 "$TMPDIR/t"
test "$(stat -c %y "$TMPDIR/t" | cut -c1-4)" = 2003
mkdir -p "$HOME/bin" && touch "$HOME/bin/tool" && chmod 0755 "$HOME/bin/tool"
echo tmp-ok
`
		if xattrs == nil {
			script += `"$H" ` + helperArg + ` setxattr build.sh user.ioh yes
"$H" ` + helperArg + ` setxattr "$TMPDIR/t" user.ioh yes
echo xattr-ok
`
		} else {
			t.Logf("setxattr left out: the filesystem takes no user.* extended attributes (%v)", xattrs)
		}
		out, output := run("env", "H="+h, "sh", "-c", script)
		if out.ExitCode != 0 || !strings.Contains(output, "tmp-ok") {
			t.Fatalf("metadata changes inside the writable roots failed (exit %d):\n%s", out.ExitCode, output)
		}
		fi, _ := os.Stat(build)
		if perm(build) != 0o700 || fi.ModTime().Year() != 2002 || perm(sub) != 0o600 {
			t.Errorf("inside the root: build.sh %v (mtime %v), sub/out.bin %v; want 0700 (2002), 0600", perm(build), fi.ModTime(), perm(sub))
		}
		if xattrs == nil {
			if v, err := getxattr(build, "user.ioh"); err != nil || v != "yes" {
				t.Errorf("user.ioh of build.sh: %q, %v", v, err)
			}
		}
	})

	t.Run("an O_PATH descriptor is refused as by the kernel", func(t *testing.T) {
		os.Chmod(build, 0o644)
		out, output := run(h, helperArg, "fchmod-opath", "build.sh", "0600")
		b, err := exec.Command(h, helperArg, "fchmod-opath", build, "0600").CombinedOutput()
		if out.ExitCode == 0 || !strings.Contains(output, "bad file descriptor") || perm(build) != 0o644 {
			t.Errorf("contained fchmod of an O_PATH descriptor: exit %d, mode %v\n%s", out.ExitCode, perm(build), output)
		}
		if err == nil || !strings.Contains(string(b), "bad file descriptor") {
			t.Errorf("uncontained fchmod of an O_PATH descriptor: %v %s; want EBADF", err, b)
		}
	})

	t.Run("attribute flags", func(t *testing.T) {
		// chattr +d through a descriptor: allowed on a file in the root,
		// refused on a readable file outside (its control outside).
		nodump := func(p string) bool {
			f, err := os.Open(p)
			if err != nil {
				return false
			}
			defer f.Close()
			v, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
			return err == nil && v&fsNodumpFl != 0
		}
		clear := func(p string) {
			if f, err := os.Open(p); err == nil {
				if v, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS); err == nil {
					unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(v&^fsNodumpFl))
				}
				f.Close()
			}
		}
		if b, err := exec.Command(h, helperArg, "setflags", build).CombinedOutput(); err != nil {
			t.Skipf("the filesystem takes no attribute flags here: %v %s", err, b)
		}
		clear(build)
		out, output := run(h, helperArg, "setflags", "build.sh")
		if out.ExitCode != 0 || !nodump(build) {
			t.Errorf("chattr +d of a file in the root: exit %d\n%s", out.ExitCode, output)
		}
		clear(build)
		out, output = run(h, helperArg, "setflags", shared)
		if set := nodump(shared); set || out.ExitCode == 0 {
			clear(shared)
			t.Errorf("chattr +d of a readable file outside: exit %d, flag set %v\n%s", out.ExitCode, set, output)
		}
		if b, err := exec.Command(h, helperArg, "setflags", shared).CombinedOutput(); err != nil || !nodump(shared) {
			t.Fatalf("uncontained control did not have the effect, so the case proves nothing: %v %s", err, b)
		}
		clear(shared)
	})

	t.Run("file capabilities stay out of reach", func(t *testing.T) {
		// The supervisor does the calls, but with no capability of its
		// own: a root caller's command cannot give a file in its root
		// file capabilities (security.capability needs CAP_SETFCAP).
		sandboxtest.NeedRoot(t, "control skipped: only root holds CAP_SETFCAP for the uncontained control")
		has := func() bool { _, err := getxattr(build, "security.capability"); return err == nil }
		out, output := run(h, helperArg, "setfcap", "build.sh")
		if set := has(); set || out.ExitCode == 0 {
			unix.Removexattr(build, "security.capability")
			t.Errorf("contained setfcap: exit %d, capability set %v\n%s", out.ExitCode, set, output)
		}
		b, err := exec.Command(h, helperArg, "setfcap", build).CombinedOutput()
		if err != nil || !has() {
			t.Fatalf("uncontained control did not have the effect, so the case proves nothing: %v %s", err, b)
		}
		unix.Removexattr(build, "security.capability")
	})

	for _, c := range []struct {
		name   string
		argv   []string
		file   string
		was    os.FileMode
		setup  func()
		landed func() bool
	}{
		{name: "chmod a protected hook", argv: []string{"chmod", "0755", ".git/hooks/pre-commit"}, file: hook, was: 0o644},
		{name: "chmod through a symlink in the root", argv: []string{"chmod", "0644", "sub/link"}, file: target, was: 0o600},
		{name: "chmod through a dirfd outside", argv: []string{h, helperArg, "fchmodat", home, "notes.txt", "0644"}, file: target, was: 0o600},
		{name: "fchmod a readable file outside", argv: []string{h, helperArg, "fchmod", shared, "0666"}, file: shared, was: 0o644},
		{name: "touch -m a protected hook", argv: []string{"touch", "-m", "-d", "2001-01-01", ".git/hooks/pre-commit"}, file: hook, was: 0o644,
			landed: func() bool { fi, _ := os.Stat(hook); return fi.ModTime().Year() == 2001 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			landed := c.landed
			if landed == nil {
				landed = func() bool { return perm(c.file) != c.was }
			}
			reset := func() { os.Chmod(c.file, c.was); now := time.Now(); os.Chtimes(c.file, now, now) }
			out, output := run(c.argv...)
			if landed() {
				reset()
				t.Errorf("contained %q changed %s (exit %d):\n%s", c.argv, c.file, out.ExitCode, output)
			}
			if out.ExitCode == 0 {
				t.Errorf("contained %q exited 0", c.argv)
			}
			ctl := exec.Command(c.argv[0], c.argv[1:]...)
			ctl.Dir = work
			b, err := ctl.CombinedOutput()
			if err != nil || !landed() {
				t.Fatalf("uncontained control did not have the effect, so the case proves nothing: %v\n%s", err, b)
			}
			reset()
		})
	}
	if xattrs == nil {
		t.Run("setxattr a protected hook", func(t *testing.T) {
			out, output := run(h, helperArg, "setxattr", ".git/hooks/pre-commit", "user.ioh", "x")
			if _, err := getxattr(hook, "user.ioh"); err == nil || out.ExitCode == 0 {
				t.Errorf("contained setxattr of the hook: exit %d, attribute set: %v\n%s", out.ExitCode, err == nil, output)
			}
			unix.Removexattr(hook, "user.ioh")
			ctl := exec.Command(h, helperArg, "setxattr", hook, "user.ioh", "x")
			if b, err := ctl.CombinedOutput(); err != nil {
				t.Fatalf("uncontained control failed: %v\n%s", err, b)
			}
			if _, err := getxattr(hook, "user.ioh"); err != nil {
				t.Fatalf("uncontained control set no attribute: %v", err)
			}
			unix.Removexattr(hook, "user.ioh")
		})
	}
}

// wantSupervised fails the test unless the run's metadata supervisor
// applied.
func wantSupervised(t *testing.T, out *Outcome) {
	t.Helper()
	for _, m := range out.Mechanisms {
		if m.Name == "metadata-supervisor" {
			if m.State != StateApplied {
				t.Fatalf("metadata supervisor %s: %s", m.State, m.Detail)
			}
			return
		}
	}
	t.Fatalf("no metadata-supervisor mechanism in %+v", out.Mechanisms)
}

func getxattr(p, name string) (string, error) {
	buf := make([]byte, 256)
	n, err := unix.Getxattr(p, name, buf)
	if err != nil {
		return "", err
	}
	if n > len(buf) {
		return "", errors.New("attribute too long")
	}
	return string(buf[:n]), nil
}

// TestLandlockMetadataExecStage: a command started through the exec
// stage (here: a run with network on a warm runner whose thread loaded
// the socket filter on its hint) has its metadata calls served too, by
// the runner, with the listener the stage handed it: a chmod inside the
// root works, one of a file outside is refused (its control outside).
func TestLandlockMetadataExecStage(t *testing.T) {
	tiersHere(t)
	useReexec(t)
	home := sandboxtest.Dir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("IOH_STATE_DIR", filepath.Join(home, "state"))
	work := filepath.Join(home, "work")
	inside, outside := filepath.Join(work, "tool"), filepath.Join(home, "notes.txt")
	for _, p := range []string{inside, outside} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	perm := func(p string) os.FileMode { fi, _ := os.Stat(p); return fi.Mode().Perm() }
	spec := func(network bool, argv ...string) Spec {
		return Spec{Argv: argv, Dir: work, Writable: []string{work}, Network: network, Backend: BackendLandlock}
	}
	keepWarm(t)
	kind := kindOf(BackendLandlock)
	runTier(t, spec(false, "true")) // the next runner is hinted "no network"
	waitWarm(t, kind)
	out, output := runTier(t, spec(true, "sh", "-c", "chmod 0755 tool && echo inside-ok; chmod 0644 "+outside+" && echo outside-changed; true"))
	wantSupervised(t, out)
	for _, m := range out.Mechanisms {
		if m.Name == "metadata-supervisor" && !strings.Contains(m.Detail, "exec stage") {
			t.Fatalf("the command did not start through the exec stage: %s", m.Detail)
		}
	}
	if !strings.Contains(output, "inside-ok") || perm(inside) != 0o755 {
		t.Errorf("chmod inside the root through the exec stage: mode %v\n%s", perm(inside), output)
	}
	if strings.Contains(output, "outside-changed") || perm(outside) != 0o600 {
		t.Errorf("chmod outside the roots through the exec stage: mode %v\n%s", perm(outside), output)
	}
	if b, err := exec.Command("chmod", "0644", outside).CombinedOutput(); err != nil || perm(outside) != 0o644 {
		t.Fatalf("uncontained control did not have the effect, so the case proves nothing: %v %s", err, b)
	}
}

// fsNodumpFl is FS_NODUMP_FL, chattr's d.
const fsNodumpFl = 0x40
