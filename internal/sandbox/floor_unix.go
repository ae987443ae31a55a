//go:build unix

package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
)

func trueArgv() []string { return []string{"true"} }

// floorCommand starts the floor stage (floorStage: the small init
// program where there is one, else this binary again), which takes the
// rlimits and execs the command in a new process group.
func floorCommand(s *Spec, env []string) (*exec.Cmd, []Mechanism, func(), error) {
	cmd, err := floorStage()
	if err != nil {
		return nil, nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	cfg := &initConfig{Argv: s.Argv, Env: env, Limits: stagecfg.Limits(s.Limits)}
	go func() { // ends when the config is written or the stage is gone
		_ = json.NewEncoder(w).Encode(cfg)
		w.Close()
	}()
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	set := []string{"core"}
	for _, l := range []struct {
		name string
		on   bool
	}{{"cpu", s.Limits.CPU > 0}, {memoryRlimitName(), s.Limits.Memory > 0}, {"processes", s.Limits.Procs > 0}, {"open files", s.Limits.Files > 0}} {
		if l.on {
			set = append(set, l.name)
		}
	}
	mechs := []Mechanism{
		// The floor tracks the command by its process group alone: a
		// process that leaves it (setsid, setpgid: a daemon) is out of
		// reach and outlives the run. The linux and landlock tiers kill
		// those too (PID namespace, subreaper).
		{"process-group", StateApplied, "the command's process group is killed as a whole when the run ends; a process that leaves the group (setsid, setpgid, as daemons do) is not tracked and survives the run"},
		{"rlimits", StateApplied, strings.Join(set, ", ")},
	}
	return cmd, mechs, func() { r.Close() }, nil
}

// procGroup identifies the run's processes: a process group id.
type procGroup = int

// attachGroup: the command leads its own process group (Setpgid).
func attachGroup(cmd *exec.Cmd, _ *Spec, _ bool) (procGroup, []Mechanism, error) {
	return cmd.Process.Pid, nil, nil
}

// killGroup kills every process of the run's group.
func killGroup(_ *exec.Cmd, pgid procGroup) {
	if pgid > 0 {
		_ = unix.Kill(-pgid, unix.SIGKILL)
	}
}

// exitStatus turns a wait result into an exit code and signal name.
func exitStatus(ps *os.ProcessState, err error) (int, string) {
	if ps == nil {
		return 125, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), ""
	}
	return ps.ExitCode(), ""
}

// floorCapHit recognizes the CPU rlimit's kill (cpu is the command's CPU
// time as the limit counted it, where the OS tells: exitedCPU); the other
// rlimits make calls fail inside the command rather than kill it.
func floorCapHit(s *Spec, ps *os.ProcessState, cpu time.Duration, _ procGroup) string {
	if ps == nil {
		return ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
		cpuCapped(ws.Signal(), max(cpu, ps.UserTime()+ps.SystemTime()), s.Limits.CPU) {
		return CapCPU
	}
	return ""
}

// cpuCapped reports whether a signal death came from RLIMIT_CPU: SIGXCPU,
// or SIGKILL with the CPU time at the (whole-second) limit. On Linux used
// is the clock the kernel checks the limit against (reaper.CPU), which is
// at the limit exactly; the 50 ms margin is for the rusage figure that is
// all other systems give.
func cpuCapped(sig syscall.Signal, used, limit time.Duration) bool {
	if limit <= 0 {
		return false
	}
	limit = (limit + time.Second - 1).Truncate(time.Second) // RLIMIT_CPU counts whole seconds
	return sig == syscall.SIGXCPU || (sig == syscall.SIGKILL && used >= limit-50*time.Millisecond)
}
