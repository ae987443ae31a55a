package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/reaper"
)

// A stage is started before its config exists: it starts its runtime and
// then blocks reading fd 3. So a long-lived caller (the server), through
// its Pool, can start the next run's stage ahead of time, while the current run goes on or the
// caller waits for work: a warm stage. The run that claims it pays neither
// the process start nor (linux tier) the clone into new namespaces, about
// 2-3 ms of the 6-8 a spawn costs. Everything that depends on the run
// (root, read view, masks, cgroups, limits, restrictions) is still built
// from the run's own config after the claim, exactly as for a stage
// started cold: a warm stage has done nothing but start. Each stage
// serves one run and is never reused. A warm stage ends with its pool
// (Pool.Close kills and reaps it) or its caller: its parent-death signal,
// and EOF on its config pipe.

// startedStage is a stage process and the caller's ends of its channels.
type startedStage struct {
	cmd       *exec.Cmd
	cfgW      *os.File // fd 3's write end: the config, then "go"
	stR       *os.File // fd 4's read end: status lines
	out, errw *lateWriter
	outR      []*os.File    // read ends of its stdout and stderr
	copied    chan struct{} // closed when both reached EOF
	warm      bool          // started ahead of its run
}

// startStage starts cmd as a stage with fresh config and status pipes,
// stdin (nil: /dev/null), and its output going to writers attached later.
// The output pipes are this caller's own (not os/exec's), so a run can
// end when the stage has closed them, before the stage has exited.
func startStage(cmd *exec.Cmd, stdin io.Reader) (*startedStage, error) {
	var mine, theirs []*os.File // caller's ends, stage's ends
	for i := 0; i < 4; i++ {    // config, status, stdout, stderr
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(mine)
			closeAll(theirs)
			return nil, fmt.Errorf("pipe: %w", err)
		}
		if i == 0 {
			mine, theirs = append(mine, w), append(theirs, r)
		} else {
			mine, theirs = append(mine, r), append(theirs, w)
		}
	}
	defer closeAll(theirs)
	st := &startedStage{cmd: cmd, cfgW: mine[0], stR: mine[1], out: &lateWriter{}, errw: &lateWriter{},
		outR: mine[2:], copied: make(chan struct{})}
	if cmd.Env == nil {
		cmd.Env = stageEnv() // a stage's environment holds its hint at most (stage_hint_linux.go)
	}
	cmd.ExtraFiles = theirs[:2]
	cmd.Stdin = stdin
	cmd.Stdout, cmd.Stderr = theirs[2], theirs[3]
	cmd.WaitDelay = 5 * time.Second // a stuck stdin reader must not hang the run
	if err := cmd.Start(); err != nil {
		closeAll(mine)
		return nil, err
	}
	var wg sync.WaitGroup
	for i, w := range []io.Writer{st.out, st.errw} {
		wg.Add(1)
		go func() { // ends at EOF: when the stage and the command have closed it
			defer wg.Done()
			_, _ = io.Copy(w, st.outR[i])
			st.outR[i].Close()
		}()
	}
	go func() { wg.Wait(); close(st.copied) }() // ends with the copies
	return st, nil
}

// close releases the caller's ends of the config and status channels.
func (st *startedStage) close() {
	st.cfgW.Close()
	st.stR.Close()
}

// awaitOutput waits until the stage's output is all copied (EOF on both
// pipes) or, if something still holds them after grace, stops copying.
func (st *startedStage) awaitOutput(grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-st.copied:
	case <-t.C:
		for _, f := range st.outR {
			f.Close()
		}
		<-st.copied
	}
}

// discard kills an unused stage and reaps it.
func (st *startedStage) discard() {
	_ = st.cmd.Process.Kill()
	st.close()
	_ = st.cmd.Wait()
	st.awaitOutput(time.Second)
}

// idle reports whether the stage is still alive and has said nothing: a
// warm stage writes its first status line only after it has its config,
// so anything readable on fd 4 (a line, or EOF because it died) means it
// cannot serve a run. EOF alone comes late or not at all for a stage
// that is dying (its main thread has exited and another is on its way)
// or whose file closes the kernel has deferred, so the stage's own state
// is asked first (stageEnding).
func (st *startedStage) idle() bool {
	if stageEnding(st.cmd.Process.Pid) {
		return false
	}
	rc, err := st.stR.SyscallConn()
	if err != nil {
		return false
	}
	quiet := false
	_ = rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		quiet = err == nil && n == 0
	})
	return quiet
}

// stageEnding reports whether stage process pid (a child of this
// process, not yet reaped) is over or on its way out: its main thread has
// exited (Z or X in /proc/PID/stat; a stage ends only by exit_group or a
// fatal signal, so its other threads follow), or, where /proc cannot be
// read, the whole process has exited (waitid, leaving it to be reaped).
func stageEnding(pid int) bool {
	if f := reaper.StatFields(pid); len(f) > 0 && f[0] != "" {
		return f[0][0] == 'Z' || f[0][0] == 'X'
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0 // Signo is SIGCHLD when it has exited
}

// lateWriter is a stage's stdout or stderr before the run that will own
// it is known: what a warm stage writes before it is claimed (only a
// stage that failed while waiting writes anything) is kept, bounded, and
// handed to the run's writer when it is attached.
type lateWriter struct {
	mu    sync.Mutex
	w     io.Writer
	early []byte
}

const lateWriterKeep = 64 << 10

func (l *lateWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		if room := lateWriterKeep - len(l.early); room > 0 {
			l.early = append(l.early, p[:min(len(p), room)]...)
		}
		return len(p), nil
	}
	return l.w.Write(p)
}

func (l *lateWriter) attach(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = w
	if len(l.early) > 0 {
		_, _ = w.Write(l.early)
		l.early = nil
	}
}

// warmStages are a pool's stages started ahead, one per kind (tier and
// clone flags), and how many runs they served.
type warmStages struct {
	mu       sync.Mutex
	ready    map[string]*startedStage
	starting map[string]bool
	// claims counts the runs a warm stage served; lastClaim is the pid
	// of the last stage claimed.
	claims, lastClaim atomic.Int64
}

// maxWarmKinds bounds how many kinds of stage wait at once (a run with
// network and one without, say); the oldest goes when another comes.
const maxWarmKinds = 2

// drop kills and reaps the stages waiting (Pool.Close).
func (w *warmStages) drop() {
	w.mu.Lock()
	var drop []*startedStage
	for k, st := range w.ready {
		drop = append(drop, st)
		delete(w.ready, k)
	}
	w.mu.Unlock()
	for _, st := range drop {
		st.discard()
	}
}

// claimWarm takes p's warm stage of this kind, if one waits and is idle.
func (p *Pool) claimWarm(kind string) *startedStage {
	if !p.active() {
		return nil
	}
	w := &p.os.stages
	w.mu.Lock()
	st := w.ready[kind]
	delete(w.ready, kind)
	w.mu.Unlock()
	if st == nil {
		return nil
	}
	if !st.idle() {
		st.discard()
		return nil
	}
	w.claims.Add(1)
	w.lastClaim.Store(int64(st.cmd.Process.Pid))
	return st
}

// prewarm starts, in the background, a stage of this kind for p's next
// run, unless p is nil or closed or one is already there or on its way.
func (p *Pool) prewarm(kind string, newCmd func() *exec.Cmd) {
	if !p.active() {
		return
	}
	w := &p.os.stages
	w.mu.Lock()
	if w.ready[kind] != nil || w.starting[kind] {
		w.mu.Unlock()
		return
	}
	if w.starting == nil {
		w.starting, w.ready = map[string]bool{}, map[string]*startedStage{}
	}
	w.starting[kind] = true
	w.mu.Unlock()
	started := p.background(func() { // Close waits for this start too
		st, err := startStage(newCmd(), nil)
		w.mu.Lock()
		delete(w.starting, kind)
		var drop []*startedStage
		if err == nil {
			st.warm = true
			if !p.active() {
				drop = append(drop, st)
			} else {
				for k, old := range w.ready {
					if len(w.ready) < maxWarmKinds {
						break
					}
					drop = append(drop, old)
					delete(w.ready, k)
				}
				w.ready[kind] = st
			}
		}
		w.mu.Unlock()
		for _, d := range drop {
			d.discard()
		}
	})
	if !started {
		w.mu.Lock()
		delete(w.starting, kind)
		w.mu.Unlock()
	}
}

// stageFor returns the stage for a run of this kind: p's warm one when
// the run reads no stdin (a warm stage's stdin is /dev/null), else one
// started now. The next run's is started when this run has ended
// (superviseStage), so it does not compete with this one for the CPUs.
func (p *Pool) stageFor(kind string, newCmd func() *exec.Cmd, stdin io.Reader) (*startedStage, error) {
	var st *startedStage
	if stdin == nil {
		st = p.claimWarm(kind)
	}
	if st == nil {
		var err error
		if st, err = startStage(newCmd(), stdin); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// errStageSilent is a stage that ended without a single status line: it
// never got as far as starting the command.
var errStageSilent = errors.New("the stage ended before it reported anything")

// warmKind names a kind of stage: its tier, clone flags and the program
// it runs in (the process may switch programs, tests do).
func warmKind(backend string, flags uintptr) string {
	return fmt.Sprintf("%s/%#x/%s", backend, flags, stageProgram().Path)
}
