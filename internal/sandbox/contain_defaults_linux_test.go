package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDefaultMemory(t *testing.T) {
	for ram, want := range map[int64]int64{0: 4 << 30, 2 << 30: 1 << 30, 8 << 30: 4 << 30, 64 << 30: 4 << 30, 6 << 30: 3 << 30} {
		if got := defaultMemory(ram); got != want {
			t.Errorf("defaultMemory(%d) = %d, want %d", ram, got, want)
		}
	}
	if DefaultLimits.Memory <= 0 || DefaultLimits.Memory > 4<<30 || DefaultLimits.Procs != 1024 {
		t.Errorf("DefaultLimits %+v", DefaultLimits)
	}
	if !strings.Contains(defaultsSummary(), "1024 processes") {
		t.Errorf("the doctor's summary does not say the process cap: %s", defaultsSummary())
	}
}

// TestContainDefaults: a run that asks for no caps still gets memory and
// process caps (cgroups where writable, else rlimits) and temporary
// filesystems of 1 GiB.
func TestContainDefaults(t *testing.T) {
	requireLinuxBackend(t)

	t.Run("memory and process caps apply", func(t *testing.T) {
		out, output := run(t, Spec{Argv: []string{"true"}})
		if out.ExitCode != 0 {
			t.Fatalf("run failed: %s", output)
		}
		var mem, procs bool
		for _, m := range out.Mechanisms {
			switch {
			case m.Name == "cgroup-memory" && m.State == StateApplied:
				mem = true
			case m.Name == "cgroup-pids" && m.State == StateApplied:
				procs = true
			case strings.HasPrefix(m.Name, "rlimit") && m.State == StateApplied:
				mem = mem || strings.Contains(m.Detail, fmt.Sprintf("data=%d", DefaultLimits.Memory))
				procs = procs || strings.Contains(m.Detail, "nproc=1024")
			}
		}
		if !mem || !procs {
			t.Errorf("memory cap applied %v, process cap applied %v; mechanisms %+v", mem, procs, out.Mechanisms)
		}
	})

	t.Run("temporary space is capped", func(t *testing.T) {
		// 1.1 GiB into /dev/shm: past the cap inside, fine on the host's
		// (half of the RAM).
		name := fmt.Sprintf("ioh-defaults-%d", os.Getpid())
		fill := "head -c 1153433600 /dev/zero > /dev/shm/" + name
		script := fill + "; s=$?; rm -f " + filepath.Join("/dev/shm", name) + "; exit $s"
		out, output := run(t, Spec{Argv: []string{"sh", "-c", script}})
		refused(t, out, output)
		if !strings.Contains(output, "No space left") {
			t.Errorf("/dev/shm: want ENOSPC from the size cap, got exit %d: %s", out.ExitCode, output)
		}
		// /tmp is the same mount kind with the same options: its size.
		out, output = run(t, Spec{Argv: []string{"stat", "-f", "-c", "%b %S", "/tmp"}})
		var blocks, bsize int64
		fmt.Sscan(output, &blocks, &bsize)
		cgroup := false
		for _, m := range out.Mechanisms {
			cgroup = cgroup || (m.Name == "cgroup-memory" && m.State == StateApplied)
		}
		if want := tempBytes(DefaultLimits.Memory, cgroup); out.ExitCode != 0 || blocks*bsize != want {
			t.Errorf("/tmp inside: %q, want %d bytes in all", output, want)
		}
		var st unix.Statfs_t
		if err := unix.Statfs("/dev/shm", &st); err != nil || st.Bavail*uint64(st.Bsize) < 2<<30 {
			t.Skipf("control skipped: the host's /dev/shm lacks 2 GiB free (%v)", err)
		}
		defer os.Remove("/dev/shm/" + name)
		control(t, "/", "sh", "-c", fill)
	})

	t.Run("doctor says them", func(t *testing.T) {
		rep := Doctor(context.Background())
		if !strings.Contains(rep.Defaults, fmt.Sprintf("memory %d MiB", DefaultLimits.Memory>>20)) || !strings.Contains(rep.Defaults, "1 GiB each") {
			t.Errorf("doctor defaults: %q", rep.Defaults)
		}
	})
}
