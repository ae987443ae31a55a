package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEtcUnreadableLeftOut: a file in /etc that others may not read (a
// 0600 file no list names, as a WireGuard key or a NetworkManager
// connection is) is out of the view in both tiers even for a root
// caller, right after it was made (the view caches see it); its 0644
// sibling is read inside, and outside the sandbox root reads both.
func TestEtcUnreadableLeftOut(t *testing.T) {
	if !isRoot() {
		t.Skip("only root can make a file in /etc; as an ordinary user the kernel refuses a 0600 root file anyway")
	}
	h := helperPath(t)
	w := newWorld(t)
	secret := fmt.Sprintf("/etc/ioh-test-secret-%d", os.Getpid())
	dir := fmt.Sprintf("/etc/ioh-test-dir-%d", os.Getpid())
	sibling := secret + ".pub"
	nested := filepath.Join(dir, "sub", "key")
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			// A run first, so the caches hold a view from before the secret.
			runTier(t, Spec{Argv: []string{"true"}, Dir: w.work, Writable: []string{w.work}, Readable: []string{w.helperDir}, Backend: tier})
			mark := fmt.Sprintf("ETC-SECRET-%s-%d", tier, time.Now().UnixNano())
			writeEtc(t, secret, mark, 0o600)
			writeEtc(t, sibling, "PUBLIC-"+mark, 0o644)
			writeEtc(t, nested, "NESTED-"+mark, 0o600)
			for _, c := range []struct {
				path, marker string
				inside       bool
			}{{secret, mark, false}, {nested, "NESTED-" + mark, false}, {sibling, "PUBLIC-" + mark, true}} {
				_, output := runTier(t, Spec{Argv: []string{h, helperArg, "read", c.path}, Dir: w.work, Writable: []string{w.work}, Readable: []string{w.helperDir}, Backend: tier})
				if got := strings.Contains(output, c.marker); got != c.inside {
					t.Errorf("%s read inside the %s tier: %v, want %v:\n%s", c.path, tier, got, c.inside, output)
				}
				ctl, err := exec.Command(h, helperArg, "read", c.path).CombinedOutput()
				if err != nil || !strings.Contains(string(ctl), c.marker) {
					t.Fatalf("control: root outside the sandbox cannot read %s, so the case proves nothing: %v\n%s", c.path, err, ctl)
				}
			}
		})
	}
}

// writeEtc writes a file below /etc with mode, removed after the test.
func writeEtc(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	top := p
	for filepath.Dir(top) != "/etc" {
		top = filepath.Dir(top)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// TestWalkUnreadable: files without other-read and directories without
// other-read or other-search are listed (the latter not looked into),
// symlinks and readable entries are not, and a directory past the depth
// bound is listed whole.
func TestWalkUnreadable(t *testing.T) {
	top := t.TempDir()
	for p, mode := range map[string]os.FileMode{"ok": 0o644, "key": 0o600, "grp": 0o640, "d/ok": 0o644, "d/e/key": 0o400} {
		writeModeFile(t, filepath.Join(top, p), mode)
	}
	os.Mkdir(filepath.Join(top, "closed"), 0o700)
	writeModeFile(t, filepath.Join(top, "closed", "x"), 0o644)
	os.Mkdir(filepath.Join(top, "nolist"), 0o711)
	os.Symlink("key", filepath.Join(top, "link"))
	deep := top
	for i := 0; i <= etcMaxDepth; i++ {
		deep = filepath.Join(deep, fmt.Sprint(i))
	}
	writeModeFile(t, filepath.Join(deep, "f"), 0o644)
	stamps := map[string]int64{}
	got := walkUnreadable(top, stamps)
	rel := func(p string) string { return strings.TrimPrefix(p, top+"/") }
	var names []string
	for _, p := range got {
		names = append(names, rel(p))
	}
	want := []string{"0/1/2/3/4/5/6/7/8", "closed", "d/e/key", "grp", "key", "nolist"}
	if !slices.Equal(names, want) {
		t.Errorf("walkUnreadable = %q, want %q", names, want)
	}
	if _, ok := stamps[filepath.Join(top, "d", "e")]; !ok {
		t.Errorf("the directories read are not stamped: %v", stamps)
	}
}

func writeModeFile(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}
