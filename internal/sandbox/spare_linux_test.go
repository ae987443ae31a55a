package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// runMemoryGroup runs `cat /proc/self/cgroup` with limits under tier and
// returns the command's v1 memory group (as /proc shows it).
func runMemoryGroup(t *testing.T, tier, dir string, limits Limits) string {
	t.Helper()
	out, output := runTier(t, Spec{Argv: []string{"cat", "/proc/self/cgroup"}, Dir: dir, Writable: []string{dir}, Backend: tier, Limits: limits})
	if out.ExitCode != 0 {
		t.Fatalf("exit %d:\n%s", out.ExitCode, output)
	}
	for _, line := range strings.Split(output, "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[1] == "memory" {
			return f[2]
		}
	}
	t.Fatalf("no memory group in:\n%s", output)
	return ""
}

// ownRunGroups lists this process's run groups (named with its pid) in
// its v1 memory group.
func ownRunGroups(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(v1Own("memory"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), cgroupPrefix+strconv.Itoa(os.Getpid())+"-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSpareCgroupServesNextRun: a long-lived caller has the next run's
// groups made ahead with the last run's limits, and the next run with
// the same limits is born in them; a run with other limits does not take
// them (its own groups carry its own limit: the control), and
// Pool.Close removes the spare, leaving no group of this process.
func TestSpareCgroupServesNextRun(t *testing.T) {
	v1Groups(t)
	tier := tiersHere(t)[0]
	useReexec(t)
	p := keepWarm(t)
	dir := sandboxtest.Dir(t)
	limits := Limits{Memory: 256 << 20, Procs: 64}
	runMemoryGroup(t, tier, dir, limits)
	testPool.wait() // the first run's groups removed, the spare made
	p.os.cgroup.Lock()
	spare := p.os.cgroup.cg
	p.os.cgroup.Unlock()
	if spare == nil || spareMemory(spare) == "" {
		t.Fatalf("no spare groups after a warm run: %+v", spare)
	}
	got := runMemoryGroup(t, tier, dir, limits)
	if filepath.Base(got) != filepath.Base(spareMemory(spare)) {
		t.Errorf("the next run with the same limits ran in %q, not in the spare %q", got, spareMemory(spare))
	}
	testPool.wait()
	p.os.cgroup.Lock()
	spare = p.os.cgroup.cg
	p.os.cgroup.Unlock()
	if spare == nil {
		t.Fatal("no spare groups after the second warm run")
	}
	other := Limits{Memory: 128 << 20, Procs: 64}
	got = runMemoryGroup(t, tier, dir, other)
	if filepath.Base(got) == filepath.Base(spareMemory(spare)) {
		t.Errorf("a run with other limits ran in the spare made for the last ones (%q)", got)
	}
	b, err := os.ReadFile(filepath.Join(v1Own("memory"), filepath.Base(got), "memory.limit_in_bytes"))
	if err == nil && strings.TrimSpace(string(b)) != strconv.Itoa(128<<20) {
		t.Errorf("the run's own group has limit %s, want %d", b, 128<<20)
	}
	p.Close()
	if left := ownRunGroups(t); len(left) != 0 {
		t.Errorf("groups of this process left after Pool.Close: %v", left)
	}
}

// TestSparePrivateDirChecked: a landlock-tier run of a long-lived caller
// takes the private directory made ahead when it is intact (the
// control), and not when it was swapped for a symlink meanwhile: its
// HOME then is a fresh directory, never the link's target.
func TestSparePrivateDirChecked(t *testing.T) {
	tiersHere(t) // skips where the landlock tier cannot run
	useReexec(t)
	keepWarm(t)
	dir := sandboxtest.Dir(t)
	home := func() string {
		out, output := runTier(t, Spec{Argv: []string{"sh", "-c", `echo "$HOME"`}, Dir: dir, Writable: []string{dir}, Backend: BackendLandlock})
		if out.ExitCode != 0 {
			t.Fatalf("exit %d:\n%s", out.ExitCode, output)
		}
		return strings.TrimSpace(output)
	}
	spare := spareDirNow
	home()
	d := spare()
	if d == "" {
		t.Fatal("no private directory made ahead after a warm run")
	}
	if got := home(); got != filepath.Join(d, "home") {
		t.Errorf("control: the run's HOME is %q, want the one made ahead %q", got, filepath.Join(d, "home"))
	}
	d = spare()
	if d == "" {
		t.Fatal("no private directory made ahead after the second run")
	}
	target := t.TempDir()
	if err := os.Mkdir(filepath.Join(target, "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(target, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	removePrivate(d)
	if err := os.Symlink(target, d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(d) })
	got := home()
	if got == filepath.Join(d, "home") || strings.HasPrefix(got, target) {
		t.Errorf("the run took a private directory swapped for a link: HOME %q (link %s -> %s)", got, d, target)
	}
	for _, sub := range []string{"home", "tmp"} {
		if _, err := os.Stat(filepath.Join(target, sub)); err != nil {
			t.Errorf("discarding the swapped directory reached the link's target: %v", err)
		}
	}
}

// TestSparePrivateDirLeftovers: a file a run leaves in the private
// directory made ahead for the next run (possible for a run whose
// writable roots hold the temporary directory) is not seen by that run:
// a spare directory holding anything but its empty home and tmp is
// discarded. Control: an intact spare is taken.
func TestSparePrivateDirLeftovers(t *testing.T) {
	tiersHere(t) // skips where the landlock tier cannot run
	useReexec(t)
	keepWarm(t)
	dir := sandboxtest.Dir(t)
	probe := func() (home, output string) {
		out, output := runTier(t, Spec{Argv: []string{"sh", "-c", `echo "$HOME"; cat "$HOME/.planted" "$TMPDIR/planted" 2>/dev/null; ls -a "$HOME/.."`}, Dir: dir, Writable: []string{dir}, Backend: BackendLandlock})
		if out.ExitCode != 0 {
			t.Fatalf("exit %d:\n%s", out.ExitCode, output)
		}
		return strings.SplitN(output, "\n", 2)[0], output
	}
	spare := spareDirNow
	probe()
	for _, plant := range []string{"home/.planted", "tmp/planted", "extra"} {
		d := spare()
		if d == "" {
			t.Fatal("no private directory made ahead after a warm run")
		}
		if err := os.WriteFile(filepath.Join(d, plant), []byte("PLANTED-BY-THE-LAST-RUN\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		home, output := probe()
		if home == filepath.Join(d, "home") || strings.Contains(output, "PLANTED-BY-THE-LAST-RUN") || strings.Contains(output, "extra") {
			t.Errorf("the run took a spare directory holding %s:\n%s", plant, output)
		}
		os.RemoveAll(d)
	}
	d := spare()
	if got, _ := probe(); got != filepath.Join(d, "home") {
		t.Errorf("control: the run's HOME is %q, want the intact one made ahead %q", got, filepath.Join(d, "home"))
	}
}

// spareDirNow is the private directory made ahead for the next run, once
// the background work of the last one is done; "" when there is none.
func spareDirNow() string {
	testPool.wait()
	sd := &testPool.os.dir
	sd.Lock()
	defer sd.Unlock()
	return sd.dir
}

// spareMemory is a spare group's v1 memory directory ("" under v2).
func spareMemory(cg *cgroup) string {
	_, mem, _ := cg.Dirs()
	return mem
}
