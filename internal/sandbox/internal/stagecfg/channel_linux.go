package stagecfg

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// A Linux tier's first stage (PID 1, the landlock runner) reads its
// config channel in two parts: the config frame (Read), sent as soon as
// the stage starts so it builds its root meanwhile, then the caller's
// GoWord once the stage may join the run's cgroups and fork (AwaitGo).
// The reads are plain blocking reads on the calling thread: the thread
// the caller's write wakes is the one that goes on with the run, with no
// hand-off through the runtime.

// GoWord is what the caller writes after the config once the stage may
// join the run's cgroups and fork.
const GoWord = "go\n"

// Read reads one config frame from fd and returns its body and what
// came after it in the same reads (the go line, if it was there).
func Read(fd int) (body, rest []byte, err error) {
	buf := make([]byte, 16<<10) // a config with its read view mostly fits
	n, want := 0, -1
	for want < 0 || n < HeaderLen+want {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := readBlocking(fd, buf[n:])
		if err != nil {
			return nil, nil, err
		}
		if m == 0 {
			if n == 0 {
				return nil, nil, errors.New("the caller closed the config channel")
			}
			return nil, nil, fmt.Errorf("config cut short after %d bytes", n)
		}
		n += m
		if want < 0 && n >= HeaderLen {
			if want, err = BodyLen(buf[:HeaderLen]); err != nil {
				return nil, nil, err
			}
			if HeaderLen+want+len(GoWord) > len(buf) {
				buf = append(buf[:n], make([]byte, HeaderLen+want+len(GoWord)-n)...)
			}
		}
	}
	return buf[HeaderLen : HeaderLen+want], buf[HeaderLen+want : n], nil
}

// readBlocking reads from fd on the calling thread, waiting in poll if
// the descriptor came non-blocking.
func readBlocking(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if _, err := unix.Poll(pfd, -1); err != nil && !errors.Is(err, unix.EINTR) {
				return 0, err
			}
		default:
			return n, err
		}
	}
}

// goLine is what is left of the config channel after the config: the
// caller writes GoWord once the stage may join the run's cgroups and
// fork. A stage process serves one run, so this is its one channel.
var goLine struct {
	ready bool   // a config was read; fd is still open
	fd    int    // the config channel
	rest  []byte // read along with the config
	// join: the run's v1 groups' "tasks" files (Config.CgroupTasks), open.
	join []int
}

// Reset forgets a go line expected before: AwaitGo fails until the next
// ExpectGo.
func Reset() {
	goLine.ready = false
}

// ExpectGo records that fd, the config channel, carries the go line next
// (rest: what Read returned after the frame) and opens tasks, the "tasks"
// files of the run's v1 groups, for AwaitGo to join. When one cannot be
// opened it closes fd and what it opened, and AwaitGo fails.
func ExpectGo(fd int, rest []byte, tasks []string) error {
	join := make([]int, 0, len(tasks))
	for _, p := range tasks {
		tfd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			closeFDs(join)
			_ = unix.Close(fd)
			return fmt.Errorf("open the run's cgroup %s: %w", p, err)
		}
		join = append(join, tfd)
	}
	goLine.ready, goLine.fd, goLine.rest, goLine.join = true, fd, rest, join
	return nil
}

// AwaitGo blocks until the caller's go line, closes the config channel,
// then moves the calling thread into the run's v1 cgroups (joinRunGroups).
// The caller must be the locked thread that forks the command or the exec
// stage next: a process is born in its forking thread's groups; one forked
// before, or by another thread, would not be in them. EOF or anything but
// GoWord means the caller gave up: the command must not start, nor may it
// start outside its groups.
func AwaitGo() error {
	if !goLine.ready {
		return errors.New("await cgroup join: no config channel")
	}
	b := goLine.rest
	goLine.ready, goLine.rest = false, nil
	var err error
	for len(b) < len(GoWord) && err == nil {
		var more [len(GoWord)]byte
		var n int
		if n, err = readBlocking(goLine.fd, more[:len(GoWord)-len(b)]); n == 0 && err == nil {
			err = errors.New("EOF")
		}
		b = append(b, more[:n]...)
	}
	_ = unix.Close(goLine.fd)
	if err != nil || string(b) != GoWord {
		closeFDs(goLine.join)
		goLine.join = nil
		return fmt.Errorf("the caller did not confirm the run's cgroups (%q, %v)", b, err)
	}
	return joinRunGroups()
}

// joinRunGroups moves the calling thread into the run's v1 cgroups: a
// write of "0" (this thread) to each "tasks" file the caller passed, open
// since the config (ExpectGo). Moving itself, a thread skips the kernel's
// wait for an RCU grace period that moving a whole process takes (13 ms
// here). The thread that forks the command may join before the caller's
// go line, but must fork only after it (AwaitGo); joining is not starting.
func joinRunGroups() error {
	join := goLine.join
	goLine.join = nil
	defer closeFDs(join)
	for _, fd := range join {
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			return fmt.Errorf("join the run's cgroup: %w", err)
		}
	}
	return nil
}

// closeFDs closes descriptors.
func closeFDs(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}
