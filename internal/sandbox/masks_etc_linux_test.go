package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestEtcUnreadableLeftOut: a file in /etc that others may not read (a
// 0600 file no list names, as a WireGuard key or a NetworkManager
// connection is) is out of the view in both tiers even for a root
// caller, right after it was made (the view caches see it); its 0644
// sibling is read inside, and outside the sandbox root reads both.
func TestEtcUnreadableLeftOut(t *testing.T) {
	sandboxtest.NeedRoot(t, "only root can make a file in /etc; as an ordinary user the kernel refuses a 0600 root file anyway")
	h := helperPath(t)
	w := newWorld(t)
	secret := fmt.Sprintf("/etc/ioh-test-secret-%d", os.Getpid())
	dir := fmt.Sprintf("/etc/ioh-test-dir-%d", os.Getpid())
	sibling := secret + ".pub"
	nested := filepath.Join(dir, "sub", "key")
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			// A run first, so the caches hold a view from before the secret.
			runTier(t, Spec{Argv: []string{"true"}, Dir: w.work, Writable: []string{w.work}, View: testView(w.helperDir), Backend: tier})
			mark := fmt.Sprintf("ETC-SECRET-%s-%d", tier, time.Now().UnixNano())
			writeEtc(t, secret, mark, 0o600)
			writeEtc(t, sibling, "PUBLIC-"+mark, 0o644)
			writeEtc(t, nested, "NESTED-"+mark, 0o600)
			for _, c := range []struct {
				path, marker string
				inside       bool
			}{{secret, mark, false}, {nested, "NESTED-" + mark, false}, {sibling, "PUBLIC-" + mark, true}} {
				_, output := runTier(t, Spec{Argv: []string{h, helperArg, "read", c.path}, Dir: w.work, Writable: []string{w.work}, View: testView(w.helperDir), Backend: tier})
				if got := strings.Contains(output, c.marker); got != c.inside {
					t.Errorf("%s read inside the %s tier: %v, want %v:\n%s", c.path, tier, got, c.inside, output)
				}
				ctl, err := exec.Command(h, helperArg, "read", c.path).CombinedOutput()
				if err != nil || !strings.Contains(string(ctl), c.marker) {
					t.Fatalf("control: root outside the sandbox cannot read %s, so the case proves nothing: %v\n%s", c.path, err, ctl)
				}
			}
		})
	}
}

// writeEtc writes a file below /etc with mode, removed after the test.
func writeEtc(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	top := p
	for filepath.Dir(top) != "/etc" {
		top = filepath.Dir(top)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}
