package sandbox

import (
	"os"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// asUserSuiteEnv marks TestContainAsOrdinaryUser's re-run.
const asUserSuiteEnv = "IOH_SANDBOX_AS_USER"

// TestContainAsOrdinaryUser re-runs the containment suite (this very test
// binary) as an ordinary user, creating the account when running as root.
// Unprivileged, the suite above already is that run.
func TestContainAsOrdinaryUser(t *testing.T) {
	if os.Getenv(asUserSuiteEnv) != "" {
		t.Skip("already the unprivileged re-run")
	}
	sandboxtest.NeedRoot(t, "not root: the suite is already running as an ordinary user")
	sandboxtest.SkipInShort(t, "the containment suite's re-run as an ordinary user")
	requireLinuxBackend(t)
	u, err := sandboxtest.OrdinaryUser()
	if err != nil {
		t.Skipf("cannot have the test user: %v", err)
	}
	// The toolchain case is left out: the user would need its own build
	// cache, and a cold one rebuilds the standard library for minutes.
	out := sandboxtest.Rerun{
		Bin:     selfPath(t), // a copy of this test binary the user can execute, the probe beside it
		Run:     "^TestContain(Filesystem|Secrets|Network|Processes|Syscalls|Caps|Stage|ForeignABI|IoctlHighBits|SetID|ProtectedDirs|PID1Signals|HostInfo|Defaults|MemoryFallback|MemoryReservations|MemoryShared|HomeAtHostPath|PrivateDirRemoved)$|^TestTier(NetworkOnHostSockets|SysVIPC)$|^TestLinuxTierIPCBounded$|^TestRemoveTree$|^TestFloorBackend$|^TestLandlockProtectedDirs$",
		User:    u,
		Env:     []string{asUserSuiteEnv + "=1"},
		Timeout: 10 * time.Minute,
	}.Do(t)
	t.Logf("suite as %s (uid %d):\n%s", u.Name, u.Uid, out)
}
