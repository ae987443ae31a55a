// Package reaper holds what a sandbox's first process does with the
// processes below it: PID 1 of the linux tier and the landlock tier's
// runner (a child subreaper) reap every orphan until the command exits
// (Until), then kill and reap the rest (KillRest, KillDescendants); and
// the command's CPU time as the kernel counts it against RLIMIT_CPU
// (CPU), which the floor tier reads too. It reads /proc and waits; it
// decides nothing about a run.
package reaper

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// KillDescendants kills every process below this one and reaps them. As
// a child subreaper this process inherits every orphan of its subtree, so
// a process that double-forked or called setsid is still found: each round
// kills all descendants seen (a killed process forks no more), and the
// children of killed ones come back as its own children for the next.
func KillDescendants() {
	if NoChildren() {
		return
	}
	self := os.Getpid()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		live := 0
		for _, pid := range descendants(self) {
			if ProcState(pid) != 'Z' {
				live++
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		reaped := reapAvailable()
		if live == 0 && reaped == 0 && len(descendants(self)) == 0 {
			return
		}
		if reaped == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// NoChildren reaps the children that have exited and reports whether none
// is left. Then no descendant is left either: every descendant's chain of
// parents ends in a child of this process, which as a subreaper inherits
// the orphans. This is the common case (the command left nothing behind),
// and it answers with one system call instead of scanning /proc.
func NoChildren() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR), err == nil && pid > 0:
			continue
		case errors.Is(err, unix.ECHILD):
			return true
		default:
			return false // children alive (pid 0) or an unexpected error
		}
	}
}

// reapAvailable reaps every exited child without blocking.
func reapAvailable() int {
	n := 0
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return n
		}
		n++
	}
}

// descendants lists the processes below pid, parents before children.
// It follows /proc/PID/task/TID/children and falls back to reading every
// process's parent where that file is missing.
func descendants(pid int) []int {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/children"); err != nil {
		return descendantsByScan(pid)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/task/*/children")
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// descendantsByScan builds the parent map from /proc/*/stat.
func descendantsByScan(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := procPPid(pid); pp > 0 {
			kids[pp] = append(kids[pp], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// StatFields returns the fields of /proc/PID/stat after the command name.
func StatFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

func ProcState(pid int) byte {
	f := StatFields(pid)
	if len(f) < 1 || f[0] == "" {
		return 'Z' // gone
	}
	return f[0][0]
}

func procPPid(pid int) int {
	f := StatFields(pid)
	if len(f) < 2 {
		return 0
	}
	pp, _ := strconv.Atoi(f[1])
	return pp
}

// Ended is how a command ended: its exit code, or the signal that killed
// it, and its CPU time.
type Ended struct {
	Exit   int
	Signal int
	CPU    time.Duration
}

// Until reaps children (orphans come to PID 1 and to a subreaper too)
// until pid exits and returns how it ended, with the command's CPU time as
// the kernel counted it against RLIMIT_CPU (CPU). If waiting fails it
// returns exit code 125, a setup failure.
func Until(pid int) Ended {
	for {
		got, err := waitExited()
		if err != nil {
			return Ended{Exit: 125}
		}
		var cpu time.Duration
		if got == pid {
			cpu = CPU(pid) // still a zombie: its clocks are readable
		}
		var ws unix.WaitStatus
		var ru unix.Rusage
		for {
			_, err = unix.Wait4(got, &ws, 0, &ru)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if got != pid {
			continue
		}
		st := Ended{CPU: max(cpu, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))}
		if ws.Signaled() {
			st.Signal = int(ws.Signal())
		} else {
			st.Exit = ws.ExitStatus()
		}
		return st
	}
}

// waitExited blocks until a child has exited and returns its pid, leaving
// it unreaped (WNOWAIT), so its CPU clock can still be read.
func waitExited() (int, error) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		return siginfoPid(&info), nil
	}
}

// siginfoPid reads si_pid, the first field of the union that follows
// si_signo, si_errno and si_code (aligned to a pointer: offset 16 on 64-bit
// systems, 12 on 32-bit ones). x/sys/unix keeps the union opaque.
func siginfoPid(info *unix.Siginfo) int {
	const ptr = unsafe.Sizeof(uintptr(0))
	off := (12 + ptr - 1) &^ (ptr - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}

// CPU is the CPU time of the exited but unreaped process pid as
// the kernel checks RLIMIT_CPU against it: the process's profiling clock
// (user+system time sampled at each tick), read through its CPU-time
// clock id. The figures wait4 and getrusage return are scaled to the
// precisely measured run time instead, and under load a process killed
// at a 1 s limit shows as little as 0.8 s there, so they cannot tell the
// cap's kill from another SIGKILL. 0 when the clock cannot be read.
func CPU(pid int) time.Duration {
	const cpuClockProf = 0 // CPUCLOCK_PROF; MAKE_PROCESS_CPUCLOCK(pid, clock) = ^pid<<3 | clock
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^pid<<3|cpuClockProf), &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// KillRest kills every other process of the sandbox's PID namespace (PID
// 1 signalling -1 reaches all of them) and reaps them. When PID 1 has no
// child left, no other process is left in its namespace (every process
// there descends from PID 1 through living parents: an orphan goes to a
// subreaper among them or to PID 1), so the signal, which walks every
// process of the machine, is skipped: the common case, a command that
// left nothing behind. Only PID 1 of a PID namespace may call it: kill(-1)
// anywhere else reaches every process the caller may signal.
func KillRest() {
	if NoChildren() {
		return
	}
	_ = unix.Kill(-1, unix.SIGKILL)
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
	}
}
