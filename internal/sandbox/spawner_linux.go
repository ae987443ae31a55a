package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// spawnArg is the stage that starts PID 1 on behalf of a large caller.
const spawnArg = stagePrefix + "spawn"

// spawnerThreshold is the caller's resident size past which PID 1 is
// started through the spawn stage. Creating a user namespace rules out
// vfork, so the kernel copies the caller's page tables for every run: a
// server holding 512 MiB pays tens of milliseconds per spawn. A fresh,
// small process of this binary pays that copy instead; it costs one more
// process start, which is the better deal only for large callers.
var spawnerThreshold int64 = 64 << 20

// initAttr makes the child PID 1 of new namespaces, root inside mapped to
// the caller's uid and gid outside, killed if its parent dies.
func initAttr(flags uintptr) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:                 flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// initCommand returns the command that becomes the sandbox's PID 1: the
// init stage itself, or for a large caller the spawn stage (started with
// vfork, no namespaces) which then starts the init stage.
func initCommand(flags uintptr) *exec.Cmd {
	if residentBytes() > spawnerThreshold {
		cmd := stageCommand(spawnArg, strconv.FormatUint(uint64(flags), 16))
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	cmd := stageCommand(initArg)
	cmd.SysProcAttr = initAttr(flags)
	return cmd
}

// residentBytes is this process's resident set size, or 0 if unknown.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// spawnMain is the spawn stage: it takes the config the caller sends on
// fd 3 (after the caller has put it in the run's cgroups), starts the init
// stage in new namespaces with the same standard streams and status fd,
// and exits when init does. Killing it kills init (parent-death signal),
// and with init the whole sandbox.
func spawnMain() int {
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	st := os.NewFile(4, "status")
	fail := func(err error) int {
		b, _ := json.Marshal(initStatus{Error: err.Error()})
		_, _ = st.Write(append(b, '\n'))
		return 125
	}
	if len(os.Args) < 3 {
		return fail(fmt.Errorf("spawn stage: missing flags"))
	}
	flags, err := strconv.ParseUint(os.Args[2], 16, 64)
	if err != nil {
		return fail(fmt.Errorf("spawn stage flags: %w", err))
	}
	cfg, err := io.ReadAll(os.NewFile(3, "config"))
	if err != nil {
		return fail(fmt.Errorf("spawn stage config: %w", err))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("spawn stage pipe: %w", err))
	}
	cmd := exec.Command("/proc/self/exe", initArg)
	cmd.Env = stageEnv()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r, st}
	cmd.SysProcAttr = initAttr(uintptr(flags))
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start init child: %w", err))
	}
	r.Close()
	st.Close() // init holds the status pipe now
	_, werr := w.Write(cfg)
	w.Close()
	if werr != nil {
		_ = cmd.Process.Kill()
	}
	_ = cmd.Wait()
	return cmd.ProcessState.ExitCode()
}
