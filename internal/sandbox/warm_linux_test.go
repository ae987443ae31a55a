package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/reaper"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// waitWarm waits until a warm stage of kind waits and returns its pid.
func waitWarm(t *testing.T, kind string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		w := &testPool.os.stages
		w.mu.Lock()
		st := w.ready[kind]
		w.mu.Unlock()
		if st != nil {
			return st.cmd.Process.Pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no warm stage of kind %s came", kind)
	return 0
}

func kindOf(tier string) string {
	if tier == BackendLandlock {
		return warmKind(BackendLandlock, 0)
	}
	return warmKind(BackendLinux, linuxFlags(false))
}

// TestWarmStageServesOneRun: with warm stages on, a run's stage is started
// ahead of it and serves that run only: what the run leaves in its
// private /tmp is gone for the next one, the warm stage process is gone
// after its run, and the run is contained like a cold one (the home's
// credentials absent; the control reads them). Both tiers.
func TestWarmStageServesOneRun(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			useReexec(t)
			keepWarm(t)
			w := newWorld(t)
			secret := filepath.Join(w.home, ".ssh", "id_ed25519")
			os.MkdirAll(filepath.Dir(secret), 0o700)
			if err := os.WriteFile(secret, []byte(w.marker), 0o600); err != nil {
				t.Fatal(err)
			}
			spec := func(script string) Spec {
				return Spec{Argv: []string{"sh", "-c", script}, Dir: w.work, Writable: []string{w.work}, Backend: tier}
			}
			// The first run starts cold and leaves a warm stage behind.
			if out, output := runTier(t, spec("true")); out.ExitCode != 0 {
				t.Fatalf("first run: exit %d: %s", out.ExitCode, output)
			}
			for i := 0; i < 2; i++ {
				pid := waitWarm(t, kindOf(tier))
				before := testPool.os.stages.claims.Load()
				out, output := runTier(t, spec("t=${TMPDIR:-/tmp}; test -e $t/left && echo REUSED; : > $t/left || exit 3; cat "+secret+" 2>&1; echo done"))
				if testPool.os.stages.claims.Load() != before+1 {
					t.Fatalf("run %d did not use the warm stage", i)
				}
				if out.ExitCode != 0 || !strings.Contains(output, "done") {
					t.Fatalf("run %d: exit %d: %s", i, out.ExitCode, output)
				}
				if strings.Contains(output, "REUSED") || strings.Contains(output, w.marker) {
					t.Errorf("run %d on a warm stage saw another run's files or the home's credentials:\n%s", i, output)
				}
				testPool.wait() // the stage exits after its run returned
				if err := syscall.Kill(pid, 0); err == nil {
					t.Errorf("run %d: the warm stage %d still runs after serving its run", i, pid)
				}
			}
			if got := control(t, w.work, "cat", secret); !strings.Contains(got, w.marker) {
				t.Fatalf("control could not read the credential: %q", got)
			}
		})
	}
}

// TestWarmStageLostFallsBack: a warm stage that died while it waited
// (killed, or its runtime failed) is not used: the run starts a stage of
// its own and succeeds. A run that reads stdin never takes a warm stage
// (their stdin is /dev/null) and gets its input.
func TestWarmStageLostFallsBack(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			useReexec(t)
			keepWarm(t)
			dir := sandboxtest.Dir(t)
			spec := Spec{Argv: []string{"sh", "-c", "echo ran"}, Dir: dir, Writable: []string{dir}, Backend: tier}
			runTier(t, spec)
			pid := waitWarm(t, kindOf(tier))
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitEnding(t, pid)
			before := testPool.os.stages.claims.Load()
			out, output := runTier(t, spec)
			if out.ExitCode != 0 || !strings.Contains(output, "ran") {
				t.Fatalf("after the warm stage died: exit %d: %q", out.ExitCode, output)
			}
			if testPool.os.stages.claims.Load() != before {
				t.Errorf("a dead warm stage was claimed")
			}

			waitWarm(t, kindOf(tier))
			before = testPool.os.stages.claims.Load()
			in := Spec{Argv: []string{"cat"}, Dir: dir, Writable: []string{dir}, Backend: tier, Stdin: strings.NewReader("from stdin\n")}
			out, output = runTier(t, in)
			if out.ExitCode != 0 || output != "from stdin\n" {
				t.Fatalf("stdin run: exit %d: %q", out.ExitCode, output)
			}
			if testPool.os.stages.claims.Load() != before {
				t.Errorf("a run reading stdin took a warm stage")
			}
		})
	}
}

// waitEnding waits until stage process pid is seen ending (stageEnding).
func waitEnding(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !stageEnding(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("stage %d was killed but is not seen ending (state %c)", pid, reaper.ProcState(pid))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestIdleSeesEndedStage: a stage that has exited is not idle even when
// its status pipe shows no EOF, because something it left behind still
// holds the pipe's write end (here a background child). Control: the
// same stage, still running, is idle.
func TestIdleSeesEndedStage(t *testing.T) {
	for _, c := range []struct {
		script string
		idle   bool
	}{
		{"sleep 30 & exit 0", false}, // ended; its child keeps fd 4 open
		{"exec sleep 30", true},      // control: alive and quiet
	} {
		cmd := exec.Command("sh", "-c", c.script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		st, err := startStage(cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		pid := st.cmd.Process.Pid
		if !c.idle {
			waitEnding(t, pid)
		}
		if got := st.idle(); got != c.idle {
			t.Errorf("%q: idle %v, want %v", c.script, got, c.idle)
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL) // the background sleep too
		_ = st.cmd.Process.Kill()
		st.close()
		_ = st.cmd.Wait()
		st.awaitOutput(0)
	}
}

// TestPoolCloseKillsWaiting: closing a pool ends the stages that wait
// (the process is gone: reaped, not a zombie), and a run through the
// closed pool starts none; a runner without a pool never has one (the
// control: the pool's first run left one waiting).
func TestPoolCloseKillsWaiting(t *testing.T) {
	tier := tiersHere(t)[0]
	useReexec(t)
	p := keepWarm(t)
	dir := sandboxtest.Dir(t)
	runTier(t, Spec{Argv: []string{"true"}, Dir: dir, Writable: []string{dir}, Backend: tier})
	pid := waitWarm(t, kindOf(tier))
	p.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("warm stage %d still runs after Pool.Close", pid)
	}
	if f := reaper.StatFields(pid); len(f) > 0 {
		t.Errorf("warm stage %d still in /proc after Pool.Close (state %s)", pid, f[0])
	}
	runTier(t, Spec{Argv: []string{"true"}, Dir: dir, Writable: []string{dir}, Backend: tier})
	testPool = nil
	runTier(t, Spec{Argv: []string{"true"}, Dir: dir, Writable: []string{dir}, Backend: tier})
	time.Sleep(100 * time.Millisecond)
	w := &p.os.stages
	w.mu.Lock()
	n := len(w.ready) + len(w.starting)
	w.mu.Unlock()
	if n != 0 {
		t.Errorf("%d warm stages in a closed pool", n)
	}
	if left := childStages(t); len(left) != 0 {
		t.Errorf("stage processes left after Pool.Close and a cold run: %v", left)
	}
}

// childStages lists this process's children that are still there
// (running or zombie): a closed pool and a cold run leave none.
func childStages(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	me := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == me {
			out = append(out, e.Name()+" "+f[0])
		}
	}
	return out
}

// TestRunsLeaveNoDescriptors: a long-lived caller's runs, warm or cold,
// leave no descriptor of theirs open (the control: the count is read the
// same way before).
func TestRunsLeaveNoDescriptors(t *testing.T) {
	tier := tiersHere(t)[0]
	useReexec(t)
	keepWarm(t)
	dir := sandboxtest.Dir(t)
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	run := func() {
		out, output := runTier(t, Spec{Argv: []string{"sh", "-c", "echo out; echo err >&2"}, Dir: dir, Writable: []string{dir}, Backend: tier})
		if out.ExitCode != 0 || !strings.Contains(output, "out") || !strings.Contains(output, "err") {
			t.Fatalf("exit %d: %q", out.ExitCode, output)
		}
	}
	run()
	testPool.Close() // nothing in flight, nothing waiting
	p := keepWarm(t)
	before := count()
	for i := 0; i < 5; i++ {
		run()
	}
	p.Close()
	if after := count(); after != before {
		t.Errorf("%d descriptors open after 5 runs, %d before", after, before)
	}
}
