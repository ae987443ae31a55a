package sandbox

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
	"testing"
)

// testUser is the unprivileged account the containment suite re-runs as.
const testUser = "ioh-sandbox-test"

// asUserSuiteEnv marks TestContainAsOrdinaryUser's re-run.
const asUserSuiteEnv = "IOH_SANDBOX_AS_USER"

// TestContainAsOrdinaryUser re-runs the containment suite (this very test
// binary) as an ordinary user, creating the account when running as root.
// Unprivileged, the suite above already is that run.
func TestContainAsOrdinaryUser(t *testing.T) {
	if os.Getenv(asUserSuiteEnv) != "" {
		t.Skip("already the unprivileged re-run")
	}
	if !isRoot() {
		t.Skip("not root: the suite is already running as an ordinary user")
	}
	skipInShort(t, "the containment suite's re-run as an ordinary user")
	requireLinuxBackend(t)
	u, err := user.Lookup(testUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", testUser).CombinedOutput(); err != nil {
			t.Skipf("cannot create the test user (useradd: %v: %s)", err, out)
		}
		if u, err = user.Lookup(testUser); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	bin := selfPath(t) // a copy of this test binary the user can execute, the probe beside it
	home := outsideDir(t)
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	// The toolchain case is left out: the user would need its own build
	// cache, and a cold one rebuilds the standard library for minutes.
	cmd := exec.Command(bin, "-test.run", "^TestContain(Filesystem|Secrets|Network|Processes|Syscalls|Caps|Stage|ForeignABI|IoctlHighBits|SetID|ProtectedDirs|PID1Signals|HostInfo|Defaults|MemoryFallback|MemoryReservations|MemoryShared|HomeAtHostPath|PrivateDirRemoved)$|^TestTier(NetworkOnHostSockets|SysVIPC)$|^TestLinuxTierIPCBounded$|^TestRemoveTree$|^TestFloorBackend$|^TestLandlockProtectedDirs$", "-test.count=1", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), asUserSuiteEnv + "=1", "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	t.Logf("suite as %s (uid %d):\n%s", testUser, uid, out)
	if err != nil {
		t.Fatalf("containment suite failed as an ordinary user: %v", err)
	}
}
