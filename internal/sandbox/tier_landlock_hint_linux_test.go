package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestViewCheckFindsEveryChange: before a prebuilt ruleset serves its
// run, each hinted path must still name the file its rule holds; most are
// checked by one listing of their directory. A path replaced (renamed
// away, a new file in its place), replaced by a hard link to another file,
// or missing at the prebuild and there now fails the check wherever it
// lies; unchanged, it passes (control), and then the listing confirmed
// the directory's entries without a stat each, where the filesystem's
// listings can stand for lookups. Each check is made after the change, as
// a run's check is made after its config.
func TestViewCheckFindsEveryChange(t *testing.T) {
	if landlockABI() < 1 {
		sandboxtest.Unavailable(t, "the kernel has no Landlock")
	}
	root := sandboxtest.Dir(t) // not the host /tmp, which may be a tmpfs
	other := filepath.Join(root, "other")
	if err := os.WriteFile(other, []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 3 * minListed
	h := viewHint{view: []string{root}, types: "d"}
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("f%02d", i))
		if i == n-2 {
			p = filepath.Join(dir, "missing") // absent at the prebuild
		} else if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.view = append(h.view, p)
		h.types += "f"
	}
	prebuild := func() *prebuiltRuleset {
		t.Helper()
		pr := prebuildRuleset(h)
		if pr == nil {
			t.Fatal("nothing was prebuilt")
		}
		t.Cleanup(pr.close)
		return pr
	}
	pr := prebuild()
	if !pr.unchanged() {
		t.Fatal("an unchanged view failed its check (control)")
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if listingFS(int64(fs.Type)) {
		if len(pr.listed) != 1 || pr.listed[0].dir != dir || len(pr.listed[0].names) != n-1 {
			t.Fatalf("planned listings %+v, want %s with its %d present entries", pr.listed, dir, n-1)
		}
		confirmed := make([]bool, len(h.view))
		pr.listed[0].confirm(pr, make([]byte, 4096), confirmed)
		want := make([]bool, len(h.view))
		for i := 1; i <= n; i++ {
			want[i] = i != n-1 // the missing path is no entry
		}
		if !slices.Equal(confirmed, want) {
			t.Errorf("the listing confirmed %v, want %v: every present entry of %s", confirmed, want, dir)
		}
	} else {
		t.Logf("%s is on a filesystem (magic %#x) whose listings are not used: every path is stat'ed", dir, fs.Type)
	}
	for _, i := range []int{1, minListed, n} {
		pr := prebuild()
		p := h.view[i]
		if err := os.Rename(p, p+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		if pr.unchanged() {
			t.Errorf("path %d of %d replaced after the prebuild: the check passed", i, n)
		}
	}
	pr = prebuild()
	p := h.view[2]
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(other, p); err != nil {
		t.Fatal(err)
	}
	if pr.unchanged() {
		t.Error("a path replaced by a hard link to another file: the check passed")
	}
	pr = prebuild()
	if err := os.WriteFile(h.view[n-1], []byte("x"), 0o644); err != nil { // the missing path
		t.Fatal(err)
	}
	if pr.unchanged() {
		t.Error("a path missing at the prebuild exists now: the check passed")
	}
	if !prebuild().unchanged() {
		t.Error("after the changes, a fresh prebuild failed its check (control)")
	}
}

// TestViewCheckSeesMounts: a file mounted over a hinted path after the
// prebuild changes what the path names, while its directory's listing
// still shows the old inode; the check fails because the mount table
// changed. Control: the listing alone confirms the entry.
func TestViewCheckSeesMounts(t *testing.T) {
	if landlockABI() < 1 {
		sandboxtest.Unavailable(t, "the kernel has no Landlock")
	}
	sandboxtest.NeedRoot(t, "a bind mount needs root here")
	root := sandboxtest.Dir(t)
	var fs unix.Statfs_t
	if err := unix.Statfs(root, &fs); err != nil {
		t.Fatal(err)
	}
	if !listingFS(int64(fs.Type)) {
		t.Skipf("%s is on a filesystem (magic %#x) whose listings are not used", root, fs.Type)
	}
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h := viewHint{}
	for i := range minListed {
		p := filepath.Join(dir, fmt.Sprintf("f%02d", i))
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.view = append(h.view, p)
		h.types += "f"
	}
	pr := prebuildRuleset(h)
	if pr == nil {
		t.Fatal("nothing was prebuilt")
	}
	defer pr.close()
	if len(pr.listed) != 1 {
		t.Fatalf("planned listings %+v, want %s", pr.listed, dir)
	}
	target := h.view[3]
	if err := unix.Mount(secret, target, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount: %v", err)
	}
	defer unix.Unmount(target, unix.MNT_DETACH)
	confirmed := make([]bool, len(h.view))
	pr.listed[0].confirm(pr, make([]byte, 4096), confirmed)
	if !confirmed[3] {
		t.Fatal("the listing did not confirm the entry mounted over, so the case proves nothing (control)")
	}
	if pr.unchanged() {
		t.Error("a file mounted over a hinted path after the prebuild: the check passed")
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
	dir := sandboxtest.Dir(t)
	sockDir := filepath.Join(dir, "sock")
	if err := os.Mkdir(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, udpAddr, _, _ := echoServers(t, sockDir)
	spec := func(network bool) Spec {
		return Spec{Argv: []string{h, helperArg, "udp", udpAddr}, Dir: dir, Network: network,
			View: testView(filepath.Dir(h)), Backend: BackendLandlock}
	}
	keepWarm(t)
	kind := kindOf(BackendLandlock)
	runTier(t, spec(false)) // the next runner is hinted "no network"
	warmRun := func(network bool) (*Outcome, string) {
		t.Helper()
		waitWarm(t, kind)
		before := testPool.os.stages.claims.Load()
		out, output := runTier(t, spec(network))
		if testPool.os.stages.claims.Load() != before+1 {
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
