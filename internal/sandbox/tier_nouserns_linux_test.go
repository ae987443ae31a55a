package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestTierContainmentOtherModes re-runs the tier tests of this binary in
// the modes this run is not: where a process cannot create user
// namespaces, as Ubuntu 24.04+ with its AppArmor restriction, Docker's
// default profile and many CI runners give (inside `bwrap --unshare-user
// --disable-userns`, whose nested user-namespace limit is 0), as the
// caller and, when the caller is root, as an ordinary user; and as that
// ordinary user with user namespaces.
func TestTierContainmentOtherModes(t *testing.T) {
	if sandboxtest.NoUserns() || os.Getenv(asUserEnv) != "" {
		t.Skip("already a re-run")
	}
	sandboxtest.SkipInShort(t, "the tier tests' re-runs without user namespaces and as an ordinary user")
	sandboxtest.Bwrap(t)
	bin := selfPath(t) // the probe is beside it
	smallInit(t)       // built next to bin, where the re-runs look for it
	modes := []sandboxtest.Rerun{{NoUserns: true}}
	if sandboxtest.IsRoot() {
		u, err := sandboxtest.OrdinaryUser()
		if err != nil {
			t.Logf("no ordinary account for the re-run: %v", err)
		} else {
			modes = append(modes, sandboxtest.Rerun{NoUserns: true, User: u}, sandboxtest.Rerun{User: u})
		}
	}
	for _, m := range modes {
		m.Bin, m.Want, m.Timeout = bin, "TestTierContainment", 5*time.Minute
		m.Run = "^(TestTierContainment|TestTierViewIsWhatIsRead|TestTierHostRunNamesWithoutViewNames|TestTierToolchainLinkInWorkspace|TestTierSelection|TestTierNetProxy|TestTierNetProxyGoModDownload|TestNetProxyMechanisms|TestLandlockProtectedDirs|TestContainCPUCapUnderLoad|TestTierGoCacheScratch|TestHintUnseenInside|TestLandlockMetadata|TestEtcUnreadableLeftOut|TestSpecProtectedPaths|TestTierNetworkOnHostSockets|TestTierSysVIPC|TestContainMemoryShared|TestBinariesDirProtected|TestSparePrivateDirLeftovers)$"
		m.Env = []string{"IOH_CONTAIN_COUNTS=" + os.Getenv("IOH_CONTAIN_COUNTS"), asUserEnv + "=1"}
		t.Run(m.Mode(), func(t *testing.T) {
			for _, line := range strings.Split(m.Do(t), "\n") {
				if strings.Contains(line, "containment ") && strings.Contains(line, " contained") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// asUserEnv marks a re-run of TestTierContainmentOtherModes.
const asUserEnv = "IOH_SANDBOX_TIER_RERUN"

// TestTierSelection checks the automatic choice and its honesty: with user
// namespaces the linux tier; without them the landlock tier, with a
// downgrade that names the cause in words (never the errno of an
// unrelated call), a requirement above it refused with the reason and the
// fix, and a requested linux backend an error.
func TestTierSelection(t *testing.T) {
	tiers := tiersHere(t)
	ctx := context.Background()
	dir := sandboxtest.Dir(t)
	runAuto := func(s Spec) (*Outcome, error) {
		var buf bytes.Buffer
		s.Argv, s.Dir, s.Writable, s.Stdout, s.Stderr = []string{"true"}, dir, []string{dir}, &buf, &buf
		withView(&s) // view_test.go
		return testRunner().Run(ctx, &s)
	}
	if tiers[0] == BackendLinux {
		out, err := runAuto(Spec{Require: BackendLandlock})
		if err != nil || out.Backend != BackendLinux || out.Downgrade != "" {
			t.Fatalf("automatic choice with user namespaces: %+v, %v; want linux, no downgrade", out, err)
		}
		_, err = runAuto(Spec{Require: BackendLandlock, Backend: BackendFloor})
		if !errors.Is(err, ErrBelowRequired) {
			t.Errorf("floor asked for under require landlock: %v, want ErrBelowRequired", err)
		}
		out, err = runAuto(Spec{Require: BackendFloor, Backend: BackendFloor})
		if err != nil || out.Backend != BackendFloor {
			t.Errorf("floor asked for under require floor: %+v, %v", out, err)
		}
		return
	}
	out, err := runAuto(Spec{})
	if err != nil || out.Backend != BackendLandlock {
		t.Fatalf("automatic choice without user namespaces: %+v, %v; want landlock", out, err)
	}
	for _, want := range []string{"linux: user namespaces unavailable", "max_user_namespaces", "to get the linux tier"} {
		if !strings.Contains(out.Downgrade, want) {
			t.Errorf("downgrade %q does not say %q", out.Downgrade, want)
		}
	}
	if strings.Contains(out.Downgrade, "/proc/self/exe") || strings.Contains(out.Downgrade, "no space left on device") {
		t.Errorf("downgrade names an unrelated call's errno: %q", out.Downgrade)
	}
	_, err = runAuto(Spec{Require: BackendLinux})
	if !errors.Is(err, ErrBelowRequired) || !strings.Contains(err.Error(), "user namespaces unavailable") || !strings.Contains(err.Error(), "sandbox.require") {
		t.Errorf("require linux without user namespaces: %v; want ErrBelowRequired naming the cause and the key", err)
	}
	_, err = runAuto(Spec{Backend: BackendLinux})
	if !errors.Is(err, ErrBackendUnavailable) || !strings.Contains(err.Error(), "user namespaces unavailable") {
		t.Errorf("linux asked for without user namespaces: %v; want ErrBackendUnavailable naming the cause", err)
	}
	rep := Doctor(ctx)
	if rep.Backend != BackendLandlock || !strings.Contains(rep.Reason, "user namespaces unavailable") {
		t.Errorf("doctor: backend %q, reason %q", rep.Backend, rep.Reason)
	}
}
