package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/reaper"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
)

// landlockArg is the landlock tier's runner stage: a child subreaper that
// starts the exec stage and, when the command ends, kills every process it
// left behind.
const landlockArg = stagePrefix + "landlock"

// landlockBackend is the tier for machines where user namespaces are
// unavailable (Ubuntu's AppArmor restriction, container runtimes, CI
// runners). It needs no privilege and no namespace: Landlock gives the
// read view and the writable roots and refuses TCP, seccomp refuses the
// other sockets and the dangerous calls, Landlock scopes keep signals and
// abstract sockets inside, and a subreaper runner kills every descendant
// at the end. What it cannot do without namespaces it says in the
// mechanisms: host processes stay visible in /proc (not readable or
// signalable), and a Stage is a private copy rather than an overlay.
type landlockBackend struct{}

func (landlockBackend) name() string { return BackendLandlock }

func (b landlockBackend) probe(ctx context.Context) ([]Mechanism, error) {
	return probeByRunning(ctx, b)
}

func (b landlockBackend) run(ctx context.Context, s *Spec) (*Outcome, error) {
	if landlockABI() < 1 {
		return nil, fmt.Errorf("%w: kernel has no Landlock (Linux 5.13+ with landlock in the lsm= boot list)", ErrSetup)
	}
	if abi := landlockABI(); s.NetProxy != nil && abi < 4 {
		return nil, refuseNetProxy(BackendLandlock, fmt.Sprintf("has Landlock ABI %d on this kernel, without TCP rules (needs 4, Linux 6.7)", abi))
	}
	tmp, err := s.pool.takePrivateDir() // private_linux.go
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	defer s.pool.releasePrivateDir(tmp)
	home, tmpdir := filepath.Join(tmp, "home"), filepath.Join(tmp, "tmp")
	var mechs []Mechanism
	dir, writable := s.Dir, append([]string{}, s.Writable...)
	if s.Stage != nil {
		// No mount namespace, so no overlay: the view is a private copy.
		view := filepath.Join(tmp, "view")
		if err := s.Stage.materialize(view); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		if _, err := dropMasked(view, s.Stage.lower, s.View.Masked); err != nil { // masks.go
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		rel, err := filepath.Rel(s.Stage.lower, s.Dir)
		if err != nil || !within(s.Dir, s.Stage.lower) {
			rel = "."
		}
		dir = filepath.Join(view, rel)
		writable = append(writable, view)
		mechs = append(mechs, Mechanism{"copy-stage", StateApplied, "staged view copied to a private directory (cloned where the filesystem can); no overlay without a mount namespace"})
	}
	env := append(BuildEnv(parentEnv(), home, s.Env), "TMPDIR="+tmpdir, "TMP="+tmpdir, "TEMP="+tmpdir)
	vw := s.View
	if len(s.Scratch) > 0 {
		prog := cacheProgram()
		var gm []Mechanism
		env, gm = goCacheScratch(s.Scratch, env, filepath.Join(tmp, "gocache"), prog) // scratch.go
		mechs = append(mechs, gm...)
		if prog != "" { // the go command starts it inside
			vw.Read = append(append([]string{}, vw.Read...), prog)
		}
	}
	// The protected directories of the caller's writable roots (.git …)
	// stay read-only, as in the linux tier: Landlock only grants, so a
	// root holding one is writable in its other entries only. Those that
	// do not exist yet are removed after the run if the command made them.
	present, absent := landlockProtected(s.Writable, s.Protected)
	// So is the directory of the stages' programs (init_program_linux.go).
	bins := protectedBinaryDirs(binaryDirs(), s.Writable)
	present = append(present, bins...)
	rv := runViewFor(s.pool.caches(), &Spec{Dir: dir, Writable: writable, Stage: s.Stage, View: vw}, writable, present) // landlock_view_cache_linux.go
	view, masked := rv.view, rv.masked
	cfg := &initConfig{
		Tier: BackendLandlock, Argv: s.Argv, Dir: dir, Network: s.Network, Limits: stagecfg.Limits(s.Limits),
		Writable: append(append([]string{}, rv.writable...), tmp),
		ReadView: view, ReadViewTypes: rv.types, Env: env,
		NetProxyPort: proxyPort(s.NetProxy),
	}
	if len(bins) > 0 {
		mechs = append(mechs, Mechanism{"binaries-dir", StateApplied, "not writable inside the writable root: " + strings.Join(bins, ":") + " (the stages' programs)"})
	}
	mechs = append(mechs,
		Mechanism{"read-view", StateApplied, fmt.Sprintf("%d paths readable: system directories, workspace, writable roots, toolchains; every home's other contents and %d secrets absent", len(view), masked)},
		Mechanism{"private-tmp", StateApplied, "TMPDIR and HOME in a private directory removed after the run; /tmp itself not writable"},
		Mechanism{"pid-namespace", StateUnavailable, "no namespaces in this tier: host processes are visible in /proc (Landlock and seccomp refuse reading, signalling and tracing them)"},
	)
	out, err := b.spawn(ctx, cfg, s, mechs)
	if out != nil {
		if m := sweepProtected(absent); m != nil {
			out.Mechanisms = append(out.Mechanisms, *m)
		}
	}
	return out, err
}

// landlockProtected splits what protectedIn lists for the writable roots
// into what exists now (kept read-only) and what does not (swept after
// the run if the command creates it).
func landlockProtected(writable, extra []string) (present, absent []string) {
	for _, w := range writable {
		for _, p := range protectedIn(w, writable, extra, readSmall) {
			if _, err := os.Lstat(p); err == nil {
				present = append(present, p)
			} else {
				absent = append(absent, p)
			}
		}
	}
	return present, absent
}

// spawn starts the runner stage and supervises it (superviseStage). It
// gets SIGTERM, not SIGKILL, when the caller dies or a cap fires: the
// runner then kills the command's whole tree before it exits; SIGKILL
// follows only if it is still there after a grace period.
func (landlockBackend) spawn(ctx context.Context, cfg *initConfig, s *Spec, mechs []Mechanism) (*Outcome, error) {
	return superviseStage(ctx, cfg, s, stageRun{
		backend: BackendLandlock, what: "runner", mechs: mechs,
		kind: warmKind(BackendLandlock, 0),
		newCmd: func() *exec.Cmd {
			// A runner started ahead of its run builds the rules of this
			// run's view before its own run comes, which mostly has the
			// same view (tier_landlock_hint_linux.go). Only for a
			// long-lived caller: a runner started for its run at once
			// would check the rules it built at the run's cost.
			cmd := stageCommand(landlockArg)
			if s.pool.active() {
				withStageHint(cmd, landlockHint(cfg)) // stage_hint_linux.go
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
			return cmd
		},
		stop: func(c *exec.Cmd) {
			_ = c.Process.Signal(syscall.SIGTERM)
			// Fires only if the runner is stuck; harmless after it exited.
			time.AfterFunc(3*time.Second, func() { _ = c.Process.Kill() })
		},
	})
}

// landlockMain is the runner stage. It becomes a child subreaper, starts
// the command in a session of its own (forked from one restricted thread,
// or through the exec stage when address-space or process rlimits must
// bind it), reaps until the command exits, then kills every descendant
// left (daemons, setsid and double-fork escapes all end up as its
// children) and reports. A SIGTERM from the caller, or the caller's death,
// does the same at once.
//
// What does not depend on the run comes before its config: the
// subreaper, the signal handling and the locked thread that reads the
// config and then restricts itself and forks (runnerThread). A runner
// started ahead of its run (warm_linux.go) has all that done before its
// run exists.
//
// The end of the run is reported by whichever comes first, the command's
// exit or the signal, from the goroutine that saw it (once): the thread
// that the command's exit wakes is the one that reports it, with no
// hand-off to the main thread.
func landlockMain() int {
	_ = unix.CloseRange(5, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	reaperErr := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	quietChildExits() // tier_landlock_start_linux.go
	var phase atomic.Int32
	termed := make(chan struct{})
	sigs := make(chan os.Signal, 1)
	notifyTerm(sigs)
	go func() { // ends at the first signal, or with the process
		<-sigs
		if phase.CompareAndSwap(runnerWaiting, runnerEnded) {
			// No run yet, so nothing started (the runner thread starts
			// nothing unless it claims the run first): end as the
			// signal's default action would have.
			os.Exit(128 + int(unix.SIGTERM))
		}
		close(termed)
	}()
	started := make(chan runnerStarted, 1)
	go runnerThread(&phase, reaperErr, stageHint(), started)
	s := <-started
	if s.err == nil && s.cfg != nil {
		s.pid, s.err = startExecStage(s.cfg, s.stF) // tier_landlock_start_linux.go
	}
	if s.err != nil {
		reaper.KillDescendants()
		return s.fail(s.err)
	}
	if s.done != nil {
		s.report(*s.done)
		return s.done.Exit
	}
	var once sync.Once
	end := make(chan int, 1)
	finish := func(st initStatus) {
		once.Do(func() {
			reaper.KillDescendants()
			s.report(st)
			end <- st.Exit
		})
	}
	// Each goroutine ends when its event comes, or with the process.
	go func() { finish(endStatus(reaper.Until(s.pid))) }()
	go func() {
		<-termed
		finish(initStatus{Done: true, Exit: 137, Signal: int(unix.SIGKILL)})
	}()
	return <-end
}

// notifyTerm delivers the signals that end a runner early.
func notifyTerm(c chan os.Signal) {
	signal.Notify(c, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
}
