package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestViewCheckFindsEveryChange: the check of a prebuilt ruleset's paths,
// split into chunks between the runner thread and a helper goroutine,
// finds a path that names another file wherever it lies (each chunk,
// first and last path of a chunk, the last path of the view) and a path
// missing at the prebuild that exists now; unchanged, it passes
// (control). Each check is made after the change, as a run's check is
// made after its config.
func TestViewCheckFindsEveryChange(t *testing.T) {
	if landlockABI() < 1 {
		if os.Getenv("CI") != "" {
			t.Fatal("the kernel has no Landlock in CI")
		}
		t.Skip("the kernel has no Landlock")
	}
	root := t.TempDir()
	const n = 5*viewChunk + 3 // six chunks, the last one short
	h := viewHint{}
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("f%02d", i))
		if i == n-2 {
			p = filepath.Join(root, "missing") // absent at the prebuild
		} else if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.view = append(h.view, p)
		h.types += "f"
	}
	check := func() bool {
		t.Helper()
		pr := prebuildRuleset(h)
		if pr == nil {
			t.Fatal("nothing was prebuilt")
		}
		defer unix.Close(pr.fd)
		return pr.startCheck().wait()
	}
	for round := 0; round < 3; round++ { // the helper takes other chunks each time
		if !check() {
			t.Errorf("round %d: an unchanged view failed its check (control)", round)
		}
	}
	for _, i := range []int{0, viewChunk - 1, viewChunk, 2*viewChunk + 3, 4 * viewChunk, n - 1} {
		pr := prebuildRuleset(h)
		if pr == nil {
			t.Fatal("nothing was prebuilt")
		}
		p := h.view[i]
		if err := os.Rename(p, p+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		if pr.startCheck().wait() {
			t.Errorf("path %d of %d replaced after the prebuild: the check passed", i, n)
		}
		unix.Close(pr.fd)
	}
	pr := prebuildRuleset(h)
	if pr == nil {
		t.Fatal("nothing was prebuilt")
	}
	if err := os.WriteFile(h.view[n-2], []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pr.startCheck().wait() {
		t.Error("a path missing at the prebuild exists now: the check passed")
	}
	unix.Close(pr.fd)
	if !check() {
		t.Error("after the changes, a fresh prebuild failed its check (control)")
	}
}

// TestWarmRunnerNetworkAgainstItsHint: a warm runner whose hint (the last
// run's) says "no network" loads the socket filter before its run. Its
// run without network cannot send UDP to a host listener (Landlock has
// no UDP rules: the socket filter refuses it); a run that asks for
// network after all still has it (the exec stage serves it, not the
// filtered thread): the control. A run without network on a runner
// hinted "network" gets the filter with its run and is refused too.
func TestWarmRunnerNetworkAgainstItsHint(t *testing.T) {
	tiers := tiersHere(t)
	if tiers[len(tiers)-1] != BackendLandlock {
		t.Fatal("no landlock tier")
	}
	useReexec(t)
	h := helperPath(t)
	dir := outsideDir(t)
	sockDir := filepath.Join(dir, "sock")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, udpAddr, _, _ := echoServers(t, sockDir)
	spec := func(network bool) Spec {
		return Spec{Argv: []string{h, helperArg, "udp", udpAddr}, Dir: dir, Network: network,
			Readable: []string{filepath.Dir(h)}, Backend: BackendLandlock}
	}
	keepWarm(t)
	kind := kindOf(BackendLandlock)
	runTier(t, spec(false)) // the next runner is hinted "no network"
	warmRun := func(network bool) (*Outcome, string) {
		t.Helper()
		waitWarm(t, kind)
		before := warmClaims.Load()
		out, output := runTier(t, spec(network))
		if warmClaims.Load() != before+1 {
			t.Fatal("the run did not take the warm runner")
		}
		return out, output
	}
	refused := func(what string, out *Outcome, output string, ahead bool) {
		t.Helper()
		if out.ExitCode == 0 || !strings.Contains(output, "socket: permission denied") {
			t.Errorf("%s: exit %d, %q; want the socket refused", what, out.ExitCode, output)
		}
		for _, m := range out.Mechanisms {
			if m.Name == "socket-filter" {
				if got := strings.Contains(m.Detail, "before the run"); got != ahead {
					t.Errorf("%s: socket filter loaded before the run %v, want %v (%s)", what, got, ahead, m.Detail)
				}
				return
			}
		}
		t.Errorf("%s: no socket-filter mechanism in %+v", what, out.Mechanisms)
	}
	out, output := warmRun(false)
	refused("hinted no network, run without", out, output, true)
	out, output = warmRun(true) // hinted no network again
	if out.ExitCode != 0 {
		t.Fatalf("hinted no network, run with network (control): exit %d, %q", out.ExitCode, output)
	}
	out, output = warmRun(false) // hinted network
	refused("hinted network, run without", out, output, false)
}
