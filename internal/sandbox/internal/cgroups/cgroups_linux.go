// Package cgroups makes, joins, reads and removes one sandboxed run's
// control groups: memory and pids caps as a v2 leaf (where memory and
// pids are delegated to the caller) or as v1 groups under the caller's
// own, the layout detected, never assumed; the groups' event counters
// say which cap a run hit; groups left by a caller that died are swept.
// It knows nothing of a run but its two caps: internal/sandbox decides
// when a run gets groups and what they mean for it.
package cgroups

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Group is one run's control groups: memory and pids caps, either as a
// v2 leaf (where memory and pids are delegated to us) or as v1 groups under
// /sys/fs/cgroup/{memory,pids}. Layout is detected, never assumed.
type Group struct {
	v2     string // v2 leaf directory, or ""
	memory string // v1 memory group, or ""
	pids   string // v1 pids group, or ""
	// The event counters capHit reads, opened with the groups: the run
	// then pays one read each, not a lookup in cgroupfs. Nil where an
	// open failed (capHit opens it then).
	memEvents, pidsEvents *os.File
}

var cgroupSeq atomic.Int64

// Mechanism is one protection the groups apply and whether it applied,
// as internal/sandbox reports it (its Mechanism has the same fields).
type Mechanism struct {
	Name, State, Detail string
}

// The states of a Mechanism, as internal/sandbox names them.
const (
	StateApplied     = "applied"
	StateUnavailable = "unavailable"
	StateFailed      = "failed"
)

// Make creates the groups for a memory cap (bytes) and a process cap,
// each where it is above zero, in lay, and returns the mechanisms it
// applied or why not. A nil Group means none apply (the rlimits take
// over).
func Make(memory int64, procs int, lay *Layout) (*Group, []Mechanism) {
	name := fmt.Sprintf("%s%d-%d", Prefix, os.Getpid(), cgroupSeq.Add(1))
	dir, v2why := lay.v2, lay.v2Why
	if dir != "" {
		leaf := filepath.Join(dir, name)
		if err := os.Mkdir(leaf, 0o755); err != nil {
			v2why = err.Error()
		} else {
			var errs []error
			if memory > 0 {
				errs = append(errs, writeFile(leaf, "memory.max", memory))
				_ = writeFile(leaf, "memory.swap.max", 0)
			}
			if procs > 0 {
				errs = append(errs, writeFile(leaf, "pids.max", int64(procs)))
			}
			if err := errors.Join(errs...); err == nil {
				var ms []Mechanism
				if memory > 0 {
					ms = append(ms, Mechanism{"cgroup-memory", StateApplied, "v2 " + leaf})
				}
				if procs > 0 {
					ms = append(ms, Mechanism{"cgroup-pids", StateApplied, "v2 " + leaf})
				}
				return (&Group{v2: leaf}).openEvents(), ms
			}
			_ = os.Remove(leaf)
			v2why = errors.Join(errs...).Error()
		}
	}
	cg := &Group{}
	var ms []Mechanism
	if memory > 0 {
		base := lay.memory
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			ms = append(ms, Mechanism{"cgroup-memory", StateUnavailable, "cgroup v2: " + v2why + "; v1: " + err.Error() + "; rlimit data (private writable memory, per process) instead"})
		} else {
			err := writeFile(dir, "memory.limit_in_bytes", memory)
			if err == nil {
				cg.memory = dir
				_ = writeFile(dir, "memory.memsw.limit_in_bytes", memory) // absent without swap accounting
				_ = writeFile(dir, "memory.swappiness", 0)
			} else {
				_ = os.Remove(dir) // the rlimit takes over
			}
			ms = append(ms, mech("cgroup-memory", err, "v1 "+dir))
		}
	}
	if procs > 0 {
		base := lay.pids
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			ms = append(ms, Mechanism{"cgroup-pids", StateUnavailable, "cgroup v2: " + v2why + "; v1: " + err.Error() + "; rlimit processes instead"})
		} else {
			err := writeFile(dir, "pids.max", int64(procs))
			if err == nil {
				cg.pids = dir
			} else {
				_ = os.Remove(dir) // the rlimit takes over
			}
			ms = append(ms, mech("cgroup-pids", err, "v1 "+dir))
		}
	}
	if cg.memory == "" && cg.pids == "" {
		return nil, ms
	}
	return cg.openEvents(), ms
}

// eventFiles are the groups' counter files: memory's (oom_kill) and
// pids' (max).
func (c *Group) eventFiles() (mem, pids string) {
	if c.v2 != "" {
		return filepath.Join(c.v2, "memory.events"), filepath.Join(c.v2, "pids.events")
	}
	if c.memory != "" {
		mem = filepath.Join(c.memory, "memory.oom_control")
	}
	if c.pids != "" {
		pids = filepath.Join(c.pids, "pids.events")
	}
	return mem, pids
}

// openEvents opens the counter files capHit will read.
func (c *Group) openEvents() *Group {
	mem, pids := c.eventFiles()
	if mem != "" {
		c.memEvents, _ = os.Open(mem)
	}
	if pids != "" {
		c.pidsEvents, _ = os.Open(pids)
	}
	return c
}

// Layout is where this process's runs put their groups: its own
// v2 group if memory and pids are delegated there (else why not), and
// its own v1 memory and pids groups.
type Layout struct {
	v2, v2Why     string
	memory, pids  string
	procSelfGroup string // /proc/self/cgroup it was read from
}

var cachedLayout atomic.Pointer[Layout]

// layout returns this process's cgroup layout, detected again only when
// its own groups (/proc/self/cgroup) changed since the last run.
func Current() *Layout {
	data, _ := os.ReadFile("/proc/self/cgroup")
	if l := cachedLayout.Load(); l != nil && l.procSelfGroup == string(data) {
		return l
	}
	l := &Layout{procSelfGroup: string(data), memory: V1Own("memory"), pids: V1Own("pids")}
	l.v2, l.v2Why = V2Base()
	cachedLayout.Store(l)
	return l
}

// SweepBases removes the stale groups of dead callers under every base a
// run's group may go in. It runs after a run, off its path.
func SweepBases() {
	l := Current()
	for _, d := range []string{l.v2, l.memory, l.pids} {
		if d != "" {
			sweepStale(d)
		}
	}
}

// Prefix starts the name of every run's group; the caller's pid and
// a sequence number follow.
const Prefix = "ioh-sandbox-"

// V1Own is this process's own group in the v1 hierarchy of controller:
// a run's group goes under it, not at the hierarchy's root, so it stays
// inside whatever confines the caller and goes with it.
func V1Own(controller string) string {
	mnt := filepath.Join("/sys/fs/cgroup", controller)
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return mnt
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && has(strings.Split(f[1], ","), controller) {
			return filepath.Join(mnt, f[2])
		}
	}
	return mnt
}

// sweepStale removes the groups that callers which died without cleaning
// up (killed) left in dir. A group is stale when the pid in its name is
// gone; a live caller's groups are left alone (a reused pid only delays
// the sweep).
func sweepStale(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), Prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
			continue
		}
		(&Group{v2: v2Dir(dir, e.Name())}).removeDir(filepath.Join(dir, e.Name()))
	}
}

// v2Dir is the group's path when dir is in a v2 hierarchy, else "".
func v2Dir(dir, name string) string {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
		return filepath.Join(dir, name)
	}
	return ""
}

// V2Base returns our own v2 cgroup's directory when memory and pids are
// delegated to its children.
func V2Base() (string, string) {
	mnt := ""
	for _, m := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(filepath.Join(m, "cgroup.controllers")); err == nil {
			mnt = m
			break
		}
	}
	if mnt == "" {
		return "", "no cgroup v2 mount"
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err.Error()
	}
	own := ""
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	dir := filepath.Join(mnt, own)
	sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return "", err.Error()
	}
	f := strings.Fields(string(sub))
	if !has(f, "memory") || !has(f, "pids") {
		got := strings.Join(f, ",")
		if got == "" {
			got = "no controller"
		}
		return "", "cgroup v2 at " + dir + " delegates " + got + ", not memory and pids"
	}
	return dir, ""
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func mech(name string, err error, detail string) Mechanism {
	if err != nil {
		return Mechanism{name, StateFailed, err.Error()}
	}
	return Mechanism{name, StateApplied, detail}
}

func writeFile(dir, name string, v int64) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(strconv.FormatInt(v, 10)), 0o644)
}

// join moves pid into the v2 group. The v1 groups are joined by the
// stage itself (taskPaths).
func (c *Group) Join(pid int) error {
	if c == nil || c.v2 == "" {
		return nil
	}
	return writeFile(c.v2, "cgroup.procs", int64(pid))
}

// taskPaths are the v1 groups' "tasks" files. The stage opens them as
// soon as it has its config (it still sees the host's /sys/fs/cgroup)
// and writes "0" to each from the thread that then forks the command
// (stagecfg.AwaitGo): the kernel moves that one thread, and the command
// it forks is born in the groups. Moving a whole process (cgroup.procs) takes the
// global cgroup_threadgroup_rwsem for writing, which waits for an RCU
// grace period (6-15 ms per run here, 45 ms under load); a thread that
// moves itself needs no such lock (kernel 6.0 and later; older kernels
// take it anyway, which is only slower). The stage has the caller's
// credentials on the host (its user namespace maps root to the caller),
// so it may write where the caller may.
func (c *Group) TaskPaths() []string {
	if c == nil {
		return nil
	}
	var ps []string
	for _, d := range []string{c.memory, c.pids} {
		if d != "" {
			ps = append(ps, filepath.Join(d, "tasks"))
		}
	}
	return ps
}

// memoryApplied and pidsApplied say which caps the groups carry.
func (c *Group) MemoryApplied() bool { return c != nil && (c.v2 != "" || c.memory != "") }
func (c *Group) PidsApplied() bool   { return c != nil && (c.v2 != "" || c.pids != "") }

// Hit reads the groups' event counters after the run: whether the
// memory cap killed a process (an OOM kill) and whether the process cap
// refused a fork.
func (c *Group) Hit() (memory, procs bool) {
	if c == nil {
		return false, false
	}
	mem, pids := c.eventFiles()
	return mem != "" && counter(c.memEvents, mem, "oom_kill") > 0, pids != "" && counter(c.pidsEvents, pids, "max") > 0
}

// Dirs are the groups' directories: the v2 leaf, or the v1 memory and
// pids groups ("" where none).
func (c *Group) Dirs() (v2, memory, pids string) {
	if c == nil {
		return "", "", ""
	}
	return c.v2, c.memory, c.pids
}

// counter reads key's value from a counter file: from f, opened with the
// group (read from its start, so the kernel renders it now), or by name.
func counter(f *os.File, file, key string) int64 {
	var data []byte
	if f != nil {
		buf := make([]byte, 4096)
		n, err := f.ReadAt(buf, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return counter(nil, file, key)
		}
		data = buf[:n]
	} else {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return 0
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove deletes the groups; the processes in them are already gone
// (the PID namespace died with its init).
func (c *Group) Remove() {
	if c == nil {
		return
	}
	for _, f := range []*os.File{c.memEvents, c.pidsEvents} {
		if f != nil {
			f.Close()
		}
	}
	for _, d := range []string{c.v2, c.memory, c.pids} {
		if d != "" {
			c.removeDir(d)
		}
	}
}

// removeDir kills what is left in the group d and removes it.
func (c *Group) removeDir(d string) {
	if c.v2 == d {
		_ = os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0o644)
	} else if b, err := os.ReadFile(filepath.Join(d, "cgroup.procs")); err == nil {
		for _, f := range strings.Fields(string(b)) { // v1 has no cgroup.kill
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
	for i := 0; i < 50; i++ { // exiting tasks leave the group asynchronously
		if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
			break
		}
		waitBriefly()
	}
}

func waitBriefly() { time.Sleep(2 * time.Millisecond) }
