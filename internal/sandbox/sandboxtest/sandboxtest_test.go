package sandboxtest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
	"github.com/ioh-lsp/ioh-lsp/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// fakeT records how a helper ended a test instead of ending it.
type fakeT struct {
	testing.TB
	ended []string // "fatal: ...", "skip: ..."
	logs  []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.ended = append(f.ended, "fatal: "+fmt.Sprintf(format, args...))
}
func (f *fakeT) Skip(args ...any) { f.ended = append(f.ended, "skip: "+fmt.Sprint(args...)) }
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// first is how f's test ended first ("" when it ran on).
func (f *fakeT) first() string {
	if len(f.ended) == 0 {
		return ""
	}
	return f.ended[0]
}

// TestUnavailable: what this machine lacks skips a test with the reason,
// and fails it in CI.
func TestUnavailable(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		f := &fakeT{}
		sandboxtest.Unavailable(f, "no %s here", "bwrap")
		want := "skip: no bwrap here"
		if ci != "" {
			want = "fatal: no bwrap here (in CI, where it must be available)"
		}
		if f.first() != want {
			t.Errorf("CI=%q: ended %q, want %q", ci, f.ended, want)
		}
	}
}

// TestTiers: the weakest tier must run; a stronger one that cannot is
// left out with its reason outside CI and fails the test in CI; in a
// re-run without user namespaces a tier that needs them must fail.
func TestTiers(t *testing.T) {
	down := errors.New("user namespaces unavailable")
	linux := func(err error) sandboxtest.Tier { return sandboxtest.Tier{Name: "linux", Err: err, Userns: true} }
	landlock := func(err error) sandboxtest.Tier { return sandboxtest.Tier{Name: "landlock", Err: err} }
	for _, c := range []struct {
		name         string
		ci, noUserns string
		tiers        []sandboxtest.Tier
		want         []string
		ended        string
	}{
		{"both run", "", "", []sandboxtest.Tier{linux(nil), landlock(nil)}, []string{"linux", "landlock"}, ""},
		{"linux cannot", "", "", []sandboxtest.Tier{linux(down), landlock(nil)}, []string{"landlock"}, ""},
		{"linux cannot in CI", "true", "", []sandboxtest.Tier{linux(down), landlock(nil)}, []string{"landlock"}, "fatal: the linux tier cannot run in CI: user namespaces unavailable"},
		{"landlock cannot", "", "", []sandboxtest.Tier{linux(nil), landlock(down)}, []string{"linux"}, "skip: the landlock tier cannot run here: user namespaces unavailable"},
		{"re-run without user namespaces", "", "1", []sandboxtest.Tier{linux(down), landlock(nil)}, []string{"landlock"}, ""},
		{"re-run where linux still works", "", "1", []sandboxtest.Tier{linux(nil), landlock(nil)}, []string{"landlock"}, "fatal: user namespaces were to be unavailable in this re-run, but the linux tier works"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("CI", c.ci)
			t.Setenv(sandboxtest.NoUsernsEnv, c.noUserns)
			f := &fakeT{}
			got := sandboxtest.Tiers(f, c.tiers...)
			if f.first() != c.ended {
				t.Errorf("ended %q, want %q", f.ended, c.ended)
			}
			if f.first() == "" && !slices.Equal(got, c.want) {
				t.Errorf("tiers %q, want %q", got, c.want)
			}
			if c.name == "linux cannot" && (len(f.logs) != 1 || !strings.Contains(f.logs[0], "user namespaces unavailable")) {
				t.Errorf("the reason the linux tier is left out was not logged: %q", f.logs)
			}
		})
	}
}

// TestChildEnv: a re-run's fresh environment carries the race runtime's
// options, QuietRace's unless this process has its own, and no more of
// this process's environment than it names.
func TestChildEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-1")
	os.Unsetenv("GORACE")
	t.Cleanup(sandboxtest.QuietRace)
	env := sandboxtest.ChildEnv("/h", "/tmp", "MARK=1")
	for _, want := range []string{"HOME=/h", "TMPDIR=/tmp", "GORACE=atexit_sleep_ms=0", "MARK=1", "PATH=" + os.Getenv("PATH")} {
		if !slices.Contains(env, want) {
			t.Errorf("ChildEnv = %q, want %s in it", env, want)
		}
	}
	if slices.Contains(env, "OPENAI_API_KEY=sk-1") {
		t.Errorf("ChildEnv = %q took a variable it does not name", env)
	}
	t.Setenv("GORACE", "halt_on_error=1")
	if env := sandboxtest.ChildEnv("/h", "/tmp"); !slices.Contains(env, "GORACE=halt_on_error=1") {
		t.Errorf("ChildEnv = %q, want this process's GORACE", env)
	}
	sandboxtest.QuietRace()
	if got := os.Getenv("GORACE"); got != "halt_on_error=1" {
		t.Errorf("QuietRace replaced a GORACE already set: %q", got)
	}
	os.Unsetenv("GORACE")
	sandboxtest.QuietRace()
	if got := os.Getenv("GORACE"); got != "atexit_sleep_ms=0" {
		t.Errorf("QuietRace: GORACE=%q", got)
	}
}

// TestDir: the directory is outside /tmp (a run's /tmp is its own), open
// to every user, and gone after the test.
func TestDir(t *testing.T) {
	var dir string
	t.Run("make", func(t *testing.T) {
		dir = sandboxtest.Dir(t)
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o777 || filepath.Dir(dir) != "/var/tmp" {
			t.Fatalf("Dir = %s: %v, %v; want a 0777 directory in /var/tmp", dir, fi.Mode(), err)
		}
	})
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s outlived its test: %v", dir, err)
	}
}
