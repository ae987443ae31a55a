package sandbox

import (
	"os"
	"os/exec"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// A warm stage's hint names the paths of the previous run's view and, for
// PID 1, the paths it masks (tier_landlock_hint_linux.go,
// rootfs_prepare_linux.go). It travels in the stage's environment
// (rootfs.EncodeHintEnv says why), which holds nothing else; the
// command's comes from its config.

// withStageHint sets cmd's environment to carry hint: what every stage
// gets (stageEnv) and the hint; nothing when the hint cannot be sent
// (rootfs.EncodeHintEnv), and the stage starts as a cold one would.
func withStageHint(cmd *exec.Cmd, hint []string) {
	if entry, ok := rootfs.EncodeHintEnv(hint); ok {
		cmd.Env = stageEnv(entry)
	}
}

// stageHint is the hint this stage was started with; nil when there is
// none or it is malformed.
func stageHint() []string {
	s, ok := os.LookupEnv(rootfs.HintEnv)
	if !ok {
		return nil
	}
	return rootfs.DecodeHintEnv(s)
}
