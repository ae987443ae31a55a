package rootfs

import (
	"strconv"
	"strings"
)

// A warm stage's hint (a root hint's parts, Hint.Args, or the landlock
// runner's) travels in the stage's environment, not on its command line:
// every process that sees the stage may read its /proc/PID/cmdline, and
// for PID 1 that includes the sandboxed command itself (/proc/1/cmdline),
// which would learn the names of the host's masked secrets and the view's
// home directories. /proc/PID/environ is readable only by a process
// allowed to ptrace the stage: neither another user nor the command (no
// capabilities, and a Landlock domain of its own) is.

// HintEnv is the variable of a stage's environment that carries its hint.
const HintEnv = "IOH_STAGE_HINT"

// MaxHintEnv bounds the encoded hint below the kernel's limit on one
// environment string (MAX_ARG_STRLEN, 128 KiB): a longer hint is not
// sent, and the stage starts as a cold one would.
const MaxHintEnv = 120 << 10

// EncodeHintEnv is the environment entry (HintEnv=...) carrying parts,
// each as its length, a colon and its bytes (a part may hold any byte but
// NUL, which no path holds); ok is false when there is nothing to send:
// no parts, a part with a NUL, or an encoding longer than MaxHintEnv.
func EncodeHintEnv(parts []string) (entry string, ok bool) {
	if len(parts) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, h := range parts {
		if strings.IndexByte(h, 0) >= 0 {
			return "", false
		}
		b.WriteString(strconv.Itoa(len(h)))
		b.WriteByte(':')
		b.WriteString(h)
	}
	if b.Len() > MaxHintEnv {
		return "", false
	}
	return HintEnv + "=" + b.String(), true
}

// DecodeHintEnv reads the parts from the value of HintEnv; nil when it is
// malformed.
func DecodeHintEnv(s string) []string {
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
