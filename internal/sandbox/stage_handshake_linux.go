package sandbox

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// stageStart is the handshake every Linux tier's first stage (PID 1, the
// landlock runner) begins with: fd 3 carries its config from the caller
// (a frame, stageconfig.go), then the caller's "go"; fd 4 takes its
// status lines back. report writes one status line; fail reports an error
// and returns the setup-failure exit code. The stage is made non-dumpable
// once the config is read. The config is read with plain blocking reads
// on the calling thread: the thread the caller's write wakes is the one
// that goes on with the run, with no hand-off through the runtime.
func stageStart() (cfg initConfig, stF *os.File, report func(initStatus), fail func(error) int, err error) {
	stF = os.NewFile(4, "status")
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	// The first report that carries mechanisms also names the program
	// the stages run in (the small init program or this whole binary).
	program := initProgramMechanism()
	named := false
	report = func(st initStatus) {
		if !named && len(st.Mechanisms) > 0 {
			st.Mechanisms = append([]Mechanism{program}, st.Mechanisms...)
			named = true
		}
		b := appendStatusLine(make([]byte, 0, 2048), st) // stageconfig.go
		if !st.Done {
			_, _ = stF.Write(b)
			return
		}
		// The last word: nothing of the run is left (each stage kills and
		// reaps the rest before it reports the end), so the caller gets
		// EOF on the output and status now, not after this process and
		// its namespaces are torn down (~1 ms). The output first, then
		// the line and the status's EOF back to back: the caller, woken
		// by the line, mostly finds the EOF with it.
		os.Stdin.Close()
		os.Stdout.Close()
		os.Stderr.Close()
		_, _ = stF.Write(b)
		stF.Close()
	}
	fail = func(err error) int {
		report(initStatus{Error: err.Error()})
		return 125
	}
	goLine.ready = false
	body, rest, err := readStageConfig(3)
	if err == nil {
		cfg, err = decodeStageConfig(body)
	}
	if err != nil {
		_ = unix.Close(3)
		return cfg, stF, report, fail, fmt.Errorf("read config: %w", err)
	}
	join := make([]int, 0, len(cfg.CgroupTasks))
	for _, p := range cfg.CgroupTasks {
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			closeFDs(join)
			_ = unix.Close(3)
			return cfg, stF, report, fail, fmt.Errorf("open the run's cgroup %s: %w", p, err)
		}
		join = append(join, fd)
	}
	goLine.ready, goLine.rest, goLine.join = true, rest, join
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	return cfg, stF, report, fail, nil
}

// readStageConfig reads one config frame from fd and returns its body and
// what came after it in the same reads (the "go" line, if it was there).
func readStageConfig(fd int) (body, rest []byte, err error) {
	buf := make([]byte, 16<<10) // a config with its read view mostly fits
	n, want := 0, -1
	for want < 0 || n < 8+want {
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
		if want < 0 && n >= 8 {
			if want, err = stageConfigLen(buf[:8]); err != nil {
				return nil, nil, err
			}
			if 8+want+len(goWord) > len(buf) {
				buf = append(buf[:n], make([]byte, 8+want+len(goWord)-n)...)
			}
		}
	}
	return buf[8 : 8+want], buf[8+want : n], nil
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

// goWord is what the caller writes after the config once the stage may
// join the run's cgroups and fork.
const goWord = "go\n"

// goLine is what is left of fd 3 after the config: the caller writes
// goWord once the stage may join the run's cgroups and fork. The caller
// sends the config first, so the stage starts and builds its root
// meanwhile.
var goLine struct {
	ready bool   // a config was read; fd 3 is still open
	rest  []byte // read along with the config
	// join: the run's v1 groups' "tasks" files (CgroupTasks), open.
	join []int
}

// awaitGo blocks until the caller's "go", then moves the calling thread
// into the run's v1 cgroups (joinRunGroups) unless it has joined them
// already. The caller must be the locked thread that forks the command or
// the exec stage next: a process is born in its forking thread's groups;
// one forked before, or by another thread, would not be in them. EOF or
// anything but "go" means the caller gave up: the command must not start,
// nor may it start outside its groups.
func awaitGo() error {
	if !goLine.ready {
		return errors.New("await cgroup join: no config channel")
	}
	b := goLine.rest
	goLine.ready, goLine.rest = false, nil
	var err error
	for len(b) < len(goWord) && err == nil {
		var more [len(goWord)]byte
		var n int
		if n, err = readBlocking(3, more[:len(goWord)-len(b)]); n == 0 && err == nil {
			err = errors.New("EOF")
		}
		b = append(b, more[:n]...)
	}
	_ = unix.Close(3)
	if err != nil || string(b) != goWord {
		closeFDs(goLine.join)
		goLine.join = nil
		return fmt.Errorf("the caller did not confirm the run's cgroups (%q, %v)", b, err)
	}
	return joinRunGroups()
}

// joinRunGroups moves the calling thread into the run's v1 cgroups: a
// write of "0" (this thread) to each "tasks" file the caller passed, open
// since the config (stageStart). Moving itself, a thread skips the
// kernel's wait for an RCU grace period that moving a whole process takes
// (13 ms here). The thread that forks the command may join before the
// caller's "go", but must fork only after it (awaitGo); joining is not
// starting.
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
