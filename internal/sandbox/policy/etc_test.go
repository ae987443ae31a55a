//go:build unix

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

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
