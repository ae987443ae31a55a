package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func init() {
	// whoami: print the name of the program that runs the action.
	moreHelpers["whoami"] = func([]string) error {
		self, err := os.Executable()
		if err == nil {
			os.Stdout.WriteString(filepath.Base(self) + "\n")
		}
		return err
	}
}

// TestProbeHandsOverToTheTestBinary: the probe runs its own actions
// itself and executes the copy of the test binary beside it for one of
// moreHelpers, with the same arguments, so a helper a test file
// registers keeps working.
func TestProbeHandsOverToTheTestBinary(t *testing.T) {
	h := helperPath(t)
	out, err := exec.Command(h, helperArg, "whoami").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != filepath.Base(selfPath(t)) {
		t.Fatalf("moreHelpers' whoami through the probe: %v %q, want the test binary's name", err, out)
	}
	out, err = exec.Command(h, helperArg, "read", "/proc/self/comm").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "probe" {
		t.Fatalf("the probe's own read ran in %q (%v), want the probe", out, err)
	}
}
