package workspace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// diffCases are (old, new) file contents; "<none>" means absent.
var diffCases = []struct {
	name     string
	old, new string
}{
	{"modify middle", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\n"},
	{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n", "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\nNINETEEN\n20\n"},
	{"insert at start", "b\nc\n", "a\nb\nc\n"},
	{"append", "a\n", "a\nb\n"},
	{"remove final newline", "a\nb\n", "a\nb"},
	{"add final newline", "a\nb", "a\nb\n"},
	{"no newline either side", "a\nold", "a\nnew"},
	{"empty to content", "", "x\n"},
	{"content to empty", "x\ny\n", ""},
	{"create", "<none>", "new file\nline 2\n"},
	{"create empty", "<none>", ""},
	{"delete", "gone\n", "<none>"},
	{"replace all", "a\nb\nc\n", "x\ny\n"},
	{"blank lines", "a\n\n\nb\n", "a\n\nb\n\n"},
}

func (c *ChangeSet) stateFor(t *testing.T, rel, content string) {
	t.Helper()
	var err error
	if content == "<none>" {
		err = c.Delete(rel)
	} else {
		err = c.WriteFile(rel, []byte(content))
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestDiffAppliesWithGit renders each case's diff and applies it with
// `git apply` and with `patch -p1` to a copy of the base, and with
// ApplyPatch to a fresh change set.
func TestDiffAppliesWithGit(t *testing.T) {
	git, gitErr := exec.LookPath("git")
	patch, patchErr := exec.LookPath("patch")
	for _, tt := range diffCases {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			if tt.old != "<none>" {
				files["f.txt"] = tt.old
			}
			r := newTestRoot(t, files)
			c := NewChangeSet(r)
			c.stateFor(t, "f.txt", tt.new)
			d := c.Diff()
			if d == "" {
				t.Fatal("empty diff")
			}
			check := func(tool string, dir string) {
				t.Helper()
				got, err := os.ReadFile(filepath.Join(dir, "f.txt"))
				if tt.new == "<none>" {
					if err == nil {
						t.Errorf("%s: file still exists", tool)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if diff := cmp.Diff(string(got), tt.new); diff != "" {
					t.Errorf("%s result (-got +want):\n%s\ndiff:\n%s", tool, diff, d)
				}
			}
			for _, tool := range []struct {
				name string
				err  error
				args []string
			}{{"git", gitErr, []string{git, "apply", "-"}}, {"patch", patchErr, []string{patch, "-p1", "-s", "-f"}}} {
				if tool.err != nil {
					t.Logf("%s not installed: skipped", tool.name)
					continue
				}
				if tool.name == "patch" && (tt.new == "" || tt.old == "") {
					continue // patch(1) cannot tell an empty file from a missing one
				}
				dir := t.TempDir()
				writeTree(t, dir, files)
				cmd := exec.Command(tool.args[0], tool.args[1:]...)
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader(d)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s\ndiff:\n%s", tool.name, err, out, d)
				}
				check(tool.name, dir)
			}
			// And through our own patcher.
			c2 := NewChangeSet(r)
			if _, err := c2.ApplyPatch([]byte(d)); err != nil && !(tt.old == "<none>" && tt.new == "") {
				t.Fatalf("ApplyPatch: %v\n%s", err, d)
			}
			if tt.old == "<none>" && tt.new == "" {
				return // a header-only diff carries no hunks for go-diff
			}
			if diff := cmp.Diff(c2.Diff(), d); diff != "" {
				t.Errorf("ApplyPatch then Diff (-got +want):\n%s", diff)
			}
		})
	}
}

func TestDiffGolden(t *testing.T) {
	r := newTestRoot(t, map[string]string{"f.txt": "a\nb\nc\n"})
	c := NewChangeSet(r)
	c.stateFor(t, "f.txt", "a\nB\nc")
	want := "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n-c\n+B\n+c\n\\ No newline at end of file\n"
	if diff := cmp.Diff(c.DiffFile("f.txt"), want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if c.DiffFile("other.txt") != "" {
		t.Error("diff of an unchanged file is not empty")
	}
}

// TestMyersRandom checks that random edits round-trip through diff and
// patch and that the script is minimal for single-line changes.
func TestMyersRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		var a []string
		for range rng.IntN(40) {
			a = append(a, fmt.Sprintf("l%d\n", rng.IntN(8)))
		}
		b := append([]string(nil), a...)
		for range rng.IntN(6) {
			switch k := rng.IntN(3); {
			case k == 0 || len(b) == 0:
				p := rng.IntN(len(b) + 1)
				b = append(b[:p], append([]string{fmt.Sprintf("n%d\n", rng.IntN(8))}, b[p:]...)...)
			case k == 1:
				p := rng.IntN(len(b))
				b = append(b[:p], b[p+1:]...)
			default:
				b[rng.IntN(len(b))] = "changed\n"
			}
		}
		var sb strings.Builder
		unifiedHunks(&sb, a, b)
		if sb.Len() == 0 {
			if strings.Join(a, "") != strings.Join(b, "") {
				t.Fatalf("case %d: empty diff for different inputs", i)
			}
			continue
		}
		patch := "--- a/f\n+++ b/f\n" + sb.String()
		r := newTestRoot(t, map[string]string{"f": strings.Join(a, "")})
		c := NewChangeSet(r)
		if _, err := c.ApplyPatch([]byte(patch)); err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, patch)
		}
		got, _ := c.ReadFile("f")
		if diff := cmp.Diff(string(got), strings.Join(b, "")); diff != "" {
			t.Fatalf("case %d (-got +want):\n%s\npatch:\n%s", i, diff, patch)
		}
	}
}

// TestDiffLargeEditDistance goes past maxEditDistance: the diff falls back
// to replacing the changed middle wholesale and still applies.
func TestDiffLargeEditDistance(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "line %d\n", i)
		if i%2 == 0 {
			fmt.Fprintf(&b, "changed %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	r := newTestRoot(t, map[string]string{"big.txt": a.String()})
	c := NewChangeSet(r)
	c.stateFor(t, "big.txt", b.String())
	c2 := NewChangeSet(r)
	if _, err := c2.ApplyPatch([]byte(c.Diff())); err != nil {
		t.Fatal(err)
	}
	got, _ := c2.ReadFile("big.txt")
	if string(got) != b.String() {
		t.Error("large diff does not round-trip")
	}
}
