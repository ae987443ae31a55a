package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTierContainmentOtherModes re-runs the tier tests of this binary in
// the modes this run is not: where a process cannot create user
// namespaces, as Ubuntu 24.04+ with its AppArmor restriction, Docker's
// default profile and many CI runners give (inside `bwrap --unshare-user
// --disable-userns`, whose nested user-namespace limit is 0), as the
// caller and, when the caller is root, as an ordinary user; and as that
// ordinary user with user namespaces.
func TestTierContainmentOtherModes(t *testing.T) {
	if os.Getenv(noUsernsEnv) != "" || os.Getenv(asUserEnv) != "" {
		t.Skip("already a re-run")
	}
	skipInShort(t, "the tier tests' re-runs without user namespaces and as an ordinary user")
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed; CI installs it (make test)")
		}
		t.Skip("bubblewrap is not installed: cannot take user namespaces away")
	}
	bin := selfPath(t) // the probe is beside it
	smallInit(t)       // built next to bin, where the re-runs look for it
	home := outsideDir(t)
	type mode struct {
		name     string
		noUserns bool
		cred     *syscall.Credential
	}
	modes := []mode{{name: "without user namespaces", noUserns: true}}
	if isRoot() {
		uid, gid, err := testAccount()
		if err != nil {
			t.Logf("no ordinary account for the re-run: %v", err)
		} else {
			os.Chown(home, uid, gid)
			cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
			modes = append(modes,
				mode{name: "without user namespaces as " + testUser, noUserns: true, cred: cred},
				mode{name: "as " + testUser, cred: cred})
		}
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			argv := []string{bin, "-test.run", "^(TestTierContainment|TestTierViewIsWhatIsRead|TestTierHostRunNamesWithoutViewNames|TestTierToolchainLinkInWorkspace|TestTierSelection|TestTierNetProxy|TestTierNetProxyGoModDownload|TestNetProxyMechanisms|TestLandlockProtectedDirs|TestContainCPUCapUnderLoad|TestTierGoCacheScratch|TestHintUnseenInside|TestLandlockMetadata|TestEtcUnreadableLeftOut|TestSpecProtectedPaths|TestTierNetworkOnHostSockets|TestTierSysVIPC|TestContainMemoryShared|TestBinariesDirProtected|TestSparePrivateDirLeftovers)$", "-test.count=1", "-test.v"}
			env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp",
				"CI=" + os.Getenv("CI"), "IOH_CONTAIN_COUNTS=" + os.Getenv("IOH_CONTAIN_COUNTS"), asUserEnv + "=1"}
			if m.noUserns {
				argv = append([]string{bwrap, "--unshare-user", "--disable-userns", "--dev-bind", "/", "/", "--"}, argv...)
				env = append(env, noUsernsEnv+"=1")
			}
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = home
			cmd.Env = env
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: m.cred}
			out, err := cmd.CombinedOutput()
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "containment ") && strings.Contains(line, " contained") {
					t.Log(strings.TrimSpace(line))
				}
			}
			if err != nil || !strings.Contains(string(out), "--- PASS: TestTierContainment") {
				t.Fatalf("tier tests %s failed (%v):\n%s", m.name, err, out)
			}
		})
	}
}

// asUserEnv marks a re-run of TestTierContainmentOtherModes.
const asUserEnv = "IOH_SANDBOX_TIER_RERUN"

// testAccount returns the ordinary account's ids, creating it as root.
func testAccount() (int, int, error) {
	u, err := user.Lookup(testUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", testUser).CombinedOutput(); err != nil {
			return 0, 0, errors.New("useradd: " + err.Error() + ": " + string(out))
		}
		if u, err = user.Lookup(testUser); err != nil {
			return 0, 0, err
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// TestTierSelection checks the automatic choice and its honesty: with user
// namespaces the linux tier; without them the landlock tier, with a
// downgrade that names the cause in words (never the errno of an
// unrelated call), a requirement above it refused with the reason and the
// fix, and a requested linux backend an error.
func TestTierSelection(t *testing.T) {
	tiers := tiersHere(t)
	ctx := context.Background()
	dir := outsideDir(t)
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
