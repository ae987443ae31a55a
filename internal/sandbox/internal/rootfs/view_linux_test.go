package rootfs

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHintFits: a view bound from a hint is taken only by a run
// that asks for the same paths, links and network choice, while every
// bound path still names the file bound there and every missing one is
// still missing; a path replaced by another directory of the same name,
// or one that appeared, refuses it.
func TestHintFits(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"/usr/lib", "/home/u/src"} {
		if err := os.MkdirAll(root+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(root+"/home/u/.gitconfig", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	view := []string{"/home/u/.gitconfig", "/home/u/src", "/opt/tool", "/proc", "/usr"}
	h := Hint{View: view, Links: map[string]string{"/lib": "usr/lib"}}
	ids := make([]PathID, len(view))
	for i, p := range view {
		var st unix.Stat_t
		switch err := unix.Stat(root+p, &st); {
		case p == "/proc":
			ids[i] = PathID{State: PathSkipped}
		case err != nil:
			ids[i] = PathID{State: PathMissing}
		default:
			ids[i] = PathID{State: PathBound, Dev: st.Dev, Ino: st.Ino}
		}
	}
	cfg := func() Hint {
		return Hint{View: slices.Clone(view), Links: map[string]string{"/lib": "usr/lib"}}
	}
	if !h.Fits(cfg(), root, ids) {
		t.Fatal("the hinted view itself does not fit")
	}
	c := cfg()
	c.Network = true
	if h.Fits(c, root, ids) {
		t.Error("fits a run with network")
	}
	c = cfg()
	c.View = append(c.View, "/srv")
	if h.Fits(c, root, ids) {
		t.Error("fits a run with another view")
	}
	c = cfg()
	c.Links["/lib64"] = "usr/lib"
	if h.Fits(c, root, ids) {
		t.Error("fits a run with other links")
	}
	c = cfg()
	c.Masked = []string{"/home/u/src/.env"}
	if h.Fits(c, root, ids) {
		t.Error("fits a run with other masks")
	}
	// A file replaced by another of the same name.
	if err := os.Rename(root+"/home/u/.gitconfig", root+"/home/u/.gitconfig.old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/home/u/.gitconfig", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h.Fits(cfg(), root, ids) {
		t.Error("fits after a bound file was replaced")
	}
	os.Remove(root + "/home/u/.gitconfig")
	if err := os.Rename(root+"/home/u/.gitconfig.old", root+"/home/u/.gitconfig"); err != nil {
		t.Fatal(err)
	}
	if !h.Fits(cfg(), root, ids) {
		t.Fatal("does not fit with the bound file back")
	}
	// A directory replaced by another.
	if err := os.Rename(root+"/home/u/src", root+"/home/u/src.old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(root+"/home/u/src", 0o755); err != nil {
		t.Fatal(err)
	}
	if h.Fits(cfg(), root, ids) {
		t.Error("fits after a bound directory was replaced")
	}
	os.Remove(root + "/home/u/src")
	if err := os.Rename(root+"/home/u/src.old", root+"/home/u/src"); err != nil {
		t.Fatal(err)
	}
	// A missing path that appeared.
	if err := os.MkdirAll(root+"/opt/tool", 0o755); err != nil {
		t.Fatal(err)
	}
	if h.Fits(cfg(), root, ids) {
		t.Error("fits after a missing path appeared")
	}
}

// TestMountsUnderMask: a mount (a writable root, a stage, a scratch
// layer) at or below one of the masked paths is found; one beside it is
// not.
func TestMountsUnderMask(t *testing.T) {
	for _, c := range []struct {
		mounts, masked []string
		want           bool
	}{
		{[]string{"/home/u/src", ""}, []string{"/home/u/.ssh", "/home/u/src/.env"}, false},
		{[]string{"/home/u/.ssh/work"}, []string{"/home/u/.ssh"}, true},
		{[]string{"/home/u/.ssh"}, []string{"/home/u/.ssh"}, true},
		{[]string{"", "/srv/secret/repo"}, []string{"/srv/secret"}, true},
		{[]string{"/home/u/.cache/x"}, []string{"/home/u/.cache"}, true},
		{[]string{"/home/u/.sshx"}, []string{"/home/u/.ssh"}, false},
		{[]string{""}, []string{"/"}, false},
	} {
		if got := MountsUnderMask(c.mounts, c.masked); got != c.want {
			t.Errorf("%q under %q: %v, want %v", c.mounts, c.masked, got, c.want)
		}
	}
}
