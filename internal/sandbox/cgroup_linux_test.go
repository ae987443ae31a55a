package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func init() {
	// cgroup-run DIR...: join the v1 groups DIR, run `true` contained
	// with the default caps and print the cgroup mechanisms.
	moreHelpers["cgroup-run"] = cgroupRun
	// cgroup-run-moved DIR...: run once (which detects this process's
	// groups), then join DIR... and run again as cgroup-run does.
	moreHelpers["cgroup-run-moved"] = func(a []string) error {
		if _, err := testRunner().Run(context.Background(), &Spec{Argv: []string{"true"}, Backend: BackendLinux, View: testView()}); err != nil {
			return err
		}
		return cgroupRun(a)
	}
}

// cgroupRun joins the v1 groups dirs, runs `true` contained with the
// default caps and prints the cgroup mechanisms.
func cgroupRun(a []string) error {
	for _, d := range a {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return err
		}
	}
	out, err := testRunner().Run(context.Background(), &Spec{Argv: []string{"true"}, Backend: BackendLinux, View: testView()})
	if err != nil {
		return err
	}
	for _, m := range out.Mechanisms {
		if strings.HasPrefix(m.Name, "cgroup-") {
			fmt.Printf("%s %s %s\n", m.Name, m.State, m.Detail)
		}
	}
	return nil
}

// v1Groups are the caller's v1 memory and pids groups, or a reason to
// skip: the run's groups are created only where this process may.
func v1Groups(t *testing.T) (mem, pids string) {
	t.Helper()
	requireLinuxBackend(t)
	if d, _ := v2Base(); d != "" {
		t.Skip("memory and pids are delegated through cgroup v2 here; a v2 group is always created under the caller's own (v2Base)")
	}
	mem, pids = v1Own("memory"), v1Own("pids")
	for _, d := range []string{mem, pids} {
		probe := filepath.Join(d, fmt.Sprintf("ioh-test-probe-%d", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil {
			t.Skipf("cannot create v1 groups under %s (%v): runs here use rlimits", d, err)
		}
		os.Remove(probe)
	}
	return mem, pids
}

// TestCgroupUnderCaller: a run's groups go under the caller's own group,
// so a caller confined by its group confines its runs, and whatever
// removes the caller's group finds them.
func TestCgroupUnderCaller(t *testing.T) {
	mem, pids := v1Groups(t)
	h := selfPath(t) // cgroup-run runs the sandbox: this package's code
	var parents []string
	for _, d := range []string{mem, pids} {
		p := filepath.Join(d, fmt.Sprintf("ioh-test-caller-%d", os.Getpid()))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
		parents = append(parents, p)
	}
	out, err := exec.Command(h, append([]string{helperArg, "cgroup-run"}, parents...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	for i, name := range []string{"cgroup-memory", "cgroup-pids"} {
		want := "applied v1 " + parents[i] + "/" + cgroupPrefix
		if !strings.Contains(string(out), name+" "+want) {
			t.Errorf("%s not under the caller's group %s:\n%s", name, parents[i], out)
		}
	}
}

// TestCgroupUnderMovedCaller: the caller's groups are detected once and
// again when the caller has moved: a run after the move puts its groups
// under the new ones.
func TestCgroupUnderMovedCaller(t *testing.T) {
	mem, pids := v1Groups(t)
	h := selfPath(t) // cgroup-run runs the sandbox: this package's code
	var parents []string
	for _, d := range []string{mem, pids} {
		p := filepath.Join(d, fmt.Sprintf("ioh-test-moved-%d", os.Getpid()))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
		parents = append(parents, p)
	}
	out, err := exec.Command(h, append([]string{helperArg, "cgroup-run-moved"}, parents...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	for i, name := range []string{"cgroup-memory", "cgroup-pids"} {
		if want := "applied v1 " + parents[i] + "/" + cgroupPrefix; !strings.Contains(string(out), name+" "+want) {
			t.Errorf("after the move, %s not under the caller's new group %s:\n%s", name, parents[i], out)
		}
	}
}

// TestCgroupStaleSwept: the groups of a caller that died without cleaning
// up go after the next run; a live caller's groups stay.
func TestCgroupStaleSwept(t *testing.T) {
	mem, pids := v1Groups(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	var stale, kept []string
	for _, d := range []string{mem, pids} {
		s := filepath.Join(d, fmt.Sprintf("%s%d-1", cgroupPrefix, dead.Process.Pid))
		k := filepath.Join(d, fmt.Sprintf("%s%d-1", cgroupPrefix, live.Process.Pid))
		for _, p := range []string{s, k} {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { os.Remove(s); os.Remove(k) })
		stale, kept = append(stale, s), append(kept, k)
	}
	out, output := run(t, Spec{Argv: []string{"true"}})
	if out.ExitCode != 0 {
		t.Fatalf("run failed: %s", output)
	}
	testPool.wait() // the sweep follows the run, off its path
	for _, s := range stale {
		if _, err := os.Stat(s); err == nil {
			t.Errorf("stale group %s of a dead caller survived the next run", s)
		}
	}
	for _, k := range kept {
		if _, err := os.Stat(k); err != nil {
			t.Errorf("group %s of a live caller was removed: %v", k, err)
		}
	}
}

// TestCommandBornInRunGroups: the command (and what it forks) is in the
// run's v1 memory and pids groups from its first instruction, in both
// tiers and through the spawn stage, although the caller never moves a
// process (the stage's forking thread joins them itself, stagecfg.AwaitGo). The
// control is the caller's own groups, which are not the run's.
func TestCommandBornInRunGroups(t *testing.T) {
	v1Groups(t)
	own := func(controller string) string {
		return "/" + strings.TrimPrefix(strings.TrimPrefix(v1Own(controller), filepath.Join("/sys/fs/cgroup", controller)), "/")
	}
	check := func(t *testing.T, output string) {
		t.Helper()
		for _, c := range []string{"memory", "pids"} {
			var path string
			for _, line := range strings.Split(output, "\n") {
				if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[1] == c {
					path = f[2]
				}
			}
			if path == own(c) || !strings.Contains(path, "/"+cgroupPrefix) {
				t.Errorf("%s group of the command %q, want a run's group (%s…), not the caller's %q:\n%s", c, path, cgroupPrefix, own(c), output)
			}
		}
	}
	argv := []string{"sh", "-c", "cat /proc/self/cgroup; sh -c 'cat /proc/self/cgroup' >/dev/null"}
	limits := Limits{Memory: 256 << 20, Procs: 64}
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			out, output := runTier(t, Spec{Argv: argv, Backend: tier, Limits: limits})
			if out.ExitCode != 0 {
				t.Fatalf("exit %d:\n%s", out.ExitCode, output)
			}
			check(t, output)
		})
	}
	t.Run("spawn stage", func(t *testing.T) {
		requireLinuxBackend(t)
		old := spawnerThreshold
		spawnerThreshold = -1
		t.Cleanup(func() { spawnerThreshold = old })
		out, output := runTier(t, Spec{Argv: argv, Backend: BackendLinux, Limits: limits})
		if out.ExitCode != 0 {
			t.Fatalf("exit %d:\n%s", out.ExitCode, output)
		}
		check(t, output)
	})
	t.Run("control", func(t *testing.T) {
		output := control(t, t.TempDir(), "cat", "/proc/self/cgroup")
		for _, c := range []string{"memory", "pids"} {
			if !strings.Contains(output, ":"+c+":"+own(c)+"\n") {
				t.Errorf("uncontained, the %s group is not the caller's %q:\n%s", c, own(c), output)
			}
		}
	})
}
