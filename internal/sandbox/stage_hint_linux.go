package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// A warm stage's hint names the paths of the previous run's view and, for
// PID 1, the paths it masks (tier_landlock_hint_linux.go,
// rootfs_hint_linux.go). It travels in the stage's environment, not on
// its command line: every process that sees the stage may read its
// /proc/PID/cmdline, and for PID 1 that includes the sandboxed command
// itself (/proc/1/cmdline), which would learn the names of the host's
// masked secrets and the view's home directories. /proc/PID/environ is
// readable only by a process allowed to ptrace the stage: neither another
// user nor the command (no capabilities, and a Landlock domain of its own)
// is. The stage's environment holds nothing else; the command's comes
// from its config.

// stageHintEnv is the one variable of a stage's environment.
const stageHintEnv = "IOH_STAGE_HINT"

// maxStageHint bounds the encoded hint below the kernel's limit on one
// environment string (MAX_ARG_STRLEN, 128 KiB): a longer hint is not
// sent, and the stage starts as a cold one would.
const maxStageHint = 120 << 10

// withStageHint sets cmd's environment to carry hint, each part as its
// length, a colon and its bytes (a part may hold any byte but NUL, which
// no path holds).
func withStageHint(cmd *exec.Cmd, hint []string) {
	if len(hint) == 0 {
		return
	}
	var b strings.Builder
	for _, h := range hint {
		if strings.IndexByte(h, 0) >= 0 {
			return
		}
		b.WriteString(strconv.Itoa(len(h)))
		b.WriteByte(':')
		b.WriteString(h)
	}
	if b.Len() > maxStageHint {
		return
	}
	cmd.Env = stageEnv(stageHintEnv + "=" + b.String())
}

// stageHint is the hint this stage was started with; nil when there is
// none or it is malformed.
func stageHint() []string {
	s, ok := os.LookupEnv(stageHintEnv)
	if !ok {
		return nil
	}
	return decodeStageHint(s)
}

func decodeStageHint(s string) []string {
	var parts []string
	for s != "" {
		i := strings.IndexByte(s, ':')
		if i <= 0 {
			return nil
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 || n > len(s)-i-1 {
			return nil
		}
		parts = append(parts, s[i+1:i+1+n])
		s = s[i+1+n:]
	}
	return parts
}
