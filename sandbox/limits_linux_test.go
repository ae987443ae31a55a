package sandbox

import (
	"strings"
	"testing"
)

func TestTempBytes(t *testing.T) {
	for _, c := range []struct {
		mem    int64
		cgroup bool
		want   int64
	}{
		{64 << 20, false, 32 << 20},
		{64 << 20, true, defaultTempBytes},
		{4 << 30, false, defaultTempBytes},
		{2 << 30, false, defaultTempBytes},
		{0, false, defaultTempBytes},
	} {
		if got := tempBytes(c.mem, c.cgroup); got != c.want {
			t.Errorf("tempBytes(%d, %v) = %d, want %d", c.mem, c.cgroup, got, c.want)
		}
	}
}

// TestContainMemoryFallback: a memory cap holds for what the command
// stores in its private /tmp and /dev/shm, with a memory cgroup (root) or
// without one (an ordinary user's re-run: TestContainAsOrdinaryUser), where
// the tmpfs sizes carry it.
func TestContainMemoryFallback(t *testing.T) {
	requireLinuxBackend(t)
	// 48 MiB in each: 96 MiB in all, past a 64 MiB cap.
	script := "head -c 50331648 /dev/zero >/tmp/a && head -c 50331648 /dev/zero >/dev/shm/b"
	out, output := run(t, Spec{Argv: []string{"sh", "-c", script}, Limits: Limits{Memory: 64 << 20}})
	refused(t, out, output)
	cgroup := false
	for _, m := range out.Mechanisms {
		if m.Name == "cgroup-memory" && m.State == StateApplied {
			cgroup = true
		}
	}
	for _, m := range out.Mechanisms {
		if m.Name != "private-tmp" {
			continue
		}
		if want := "32 MiB each"; !cgroup && !strings.Contains(m.Detail, want) {
			t.Errorf("without a memory cgroup the private-tmp mechanism should say %q: %s", want, m.Detail)
		}
		if want := "1 GiB each"; cgroup && !strings.Contains(m.Detail, want) {
			t.Errorf("with a memory cgroup the private-tmp mechanism should say %q: %s", want, m.Detail)
		}
	}
	t.Logf("memory cgroup %v: exit %d, cap %q: %s", cgroup, out.ExitCode, out.CapHit, output)
	// The same 96 MiB stored uncontained, on disk.
	control(t, outsideDir(t), "sh", "-c", "head -c 50331648 /dev/zero >a && head -c 50331648 /dev/zero >b")
}
