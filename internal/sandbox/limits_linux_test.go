package sandbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
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
	control(t, sandboxtest.Dir(t), "sh", "-c", "head -c 50331648 /dev/zero >a && head -c 50331648 /dev/zero >b")
}

// TestContainMemoryReservations: where an rlimit carries the memory cap
// (an ordinary user's re-run: TestContainAsOrdinaryUser), it counts what a
// process can fill, not the address space it reserves: V8's WebAssembly
// memories and a Go program reserving 8 GiB start under the default caps,
// while making a reservation writable past an explicit cap still fails.
// With a memory cgroup (root) the same runs pass on the cgroup alone.
func TestContainMemoryReservations(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	reserve := func(writable int64) []string {
		return []string{h, helperArg, "reserve", fmt.Sprint(int64(8 << 30)), fmt.Sprint(writable)}
	}
	t.Run("a large reservation starts under the default caps", func(t *testing.T) {
		argv := reserve(1 << 20)
		out, output := run(t, Spec{Argv: argv})
		if out.ExitCode != 0 {
			t.Errorf("8 GiB reserved, 1 MiB used, under the default caps: exit %d: %s; mechanisms %+v", out.ExitCode, output, out.Mechanisms)
		}
		control(t, "/", argv...)
	})
	t.Run("node WebAssembly.Memory starts under the default caps", func(t *testing.T) {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("no node on PATH (the Go reservation case covers the mechanism)")
		}
		argv := []string{node, "-e", "new WebAssembly.Memory({initial: 1}); console.log('ok')"}
		out, output := run(t, Spec{Argv: argv, View: testView(filepath.Dir(node))})
		if out.ExitCode != 0 || !strings.Contains(output, "ok") {
			t.Errorf("node WebAssembly.Memory under the default caps: exit %d: %s", out.ExitCode, output)
		}
	})
	t.Run("filling a reservation past the cap fails", func(t *testing.T) {
		argv := reserve(256 << 20)
		out, output := run(t, Spec{Argv: argv, Limits: Limits{Memory: 64 << 20}})
		refused(t, out, output)
		control(t, "/", argv...)
	})
}

// TestMemoryFloor: a memory cap too small to start a process is a clear
// ErrBadSpec before anything runs, on every tier; the floor itself runs.
func TestMemoryFloor(t *testing.T) {
	for _, mem := range []int64{1, 4 << 10, minMemory - 1} {
		_, err := testRunner().Run(context.Background(), &Spec{Argv: []string{"true"}, Limits: Limits{Memory: mem}, View: testView()})
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "below the 16 MiB") {
			t.Errorf("memory cap %d: err %v, want ErrBadSpec naming the 16 MiB floor", mem, err)
		}
	}
	// The floor tier's /tmp is the host's: the file goes to a directory of
	// the test's own.
	dir := t.TempDir()
	out, output := run(t, Spec{Argv: []string{"sh", "-c", "echo ok >x && cat x"}, Dir: dir, Writable: []string{dir}, Backend: BackendFloor, Limits: Limits{Memory: minMemory}})
	if out.ExitCode != 0 || !strings.Contains(output, "ok") {
		t.Errorf("a run at the floor (%d bytes) under the floor tier: exit %d: %s", int64(minMemory), out.ExitCode, output)
	}
	if _, err := (linuxBackend{}).probe(context.Background()); err == nil {
		out, output := run(t, Spec{Argv: []string{"sh", "-c", "echo ok >/tmp/x && cat /tmp/x"}, Limits: Limits{Memory: minMemory}})
		if out.ExitCode != 0 || !strings.Contains(output, "ok") {
			t.Errorf("a run at the floor (%d bytes) under the linux tier: exit %d: %s", int64(minMemory), out.ExitCode, output)
		}
	}
}

// TestContainMemoryShared: a memory cap holds for shared memory, which
// RLIMIT_DATA does not count. With a memory cgroup (root) the cgroup
// charges it; without one (an ordinary user's re-run:
// TestContainAsOrdinaryUser) the address-space backstop and the file-size
// rlimit carry it (memoryRlimits), and the rlimits mechanism says the cap
// is partial. Under --memory 256MiB, 1 GiB of a memfd or of a
// MAP_SHARED|MAP_ANONYMOUS mapping is refused in both tiers (it was
// filled); the same 128 MiB within the cap is filled, and the 1 GiB
// uncontained.
func TestContainMemoryShared(t *testing.T) {
	probe := helperPath(t)
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			for _, kind := range []string{"memfd", "shmanon"} {
				spec := func(n int64) Spec {
					return Spec{Argv: []string{probe, kind, fmt.Sprint(n)}, Backend: tier,
						View: testView(filepath.Dir(probe)), Limits: Limits{Memory: 256 << 20}}
				}
				out, output := runTier(t, spec(1<<30))
				if out.ExitCode == 0 {
					t.Errorf("%s: 1 GiB filled under a 256 MiB cap: %s; mechanisms %+v", kind, output, out.Mechanisms)
				}
				out, output = runTier(t, spec(128<<20))
				if out.ExitCode != 0 {
					t.Errorf("%s: 128 MiB within a 256 MiB cap refused (exit %d): %s; mechanisms %+v", kind, out.ExitCode, output, out.Mechanisms)
				}
				if !cgroupMemoryApplied(out) && !mechanismSays(out, "rlimits", "memory cap partial") {
					t.Errorf("%s: no cgroup carries the cap, and the rlimits mechanism does not call it partial: %+v", kind, out.Mechanisms)
				}
				control(t, "/", probe, kind, fmt.Sprint(1<<30))
			}
		})
	}
}

// cgroupMemoryApplied reports whether a memory cgroup held the run.
func cgroupMemoryApplied(out *Outcome) bool {
	return hasMechanism(out, "cgroup-memory", StateApplied)
}

// mechanismSays reports whether out applied the mechanism name with a
// detail containing detail.
func mechanismSays(out *Outcome, name, detail string) bool {
	for _, m := range out.Mechanisms {
		if m.Name == name && m.State == StateApplied && strings.Contains(m.Detail, detail) {
			return true
		}
	}
	return false
}

func TestAddressSpaceBackstop(t *testing.T) {
	for _, c := range []struct {
		mem  int64
		want uint64
	}{
		{16 << 20, 1 << 30},
		{256 << 20, 1 << 30},
		{512 << 20, 2 << 30},
		{4 << 30, 16 << 30},
		{math.MaxInt64, math.MaxUint64},
	} {
		if got := addressSpaceBackstop(c.mem); got != c.want {
			t.Errorf("addressSpaceBackstop(%d) = %d, want %d", c.mem, got, c.want)
		}
	}
	d := memoryRlimitsDetail(256 << 20)
	for _, want := range []string{"data=268435456", "as=1073741824", "fsize=268435456", "memory cap partial"} {
		if !strings.Contains(d, want) {
			t.Errorf("memoryRlimitsDetail: %q lacks %q", d, want)
		}
	}
}
