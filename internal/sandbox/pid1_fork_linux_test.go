package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// threadStatus reads a field of /proc/thread-self/status.
func threadStatus(t *testing.T, status, field string) string {
	t.Helper()
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in thread status:\n%s", field, status)
	return ""
}

// TestForkThreadRestrictedAlone: the fork thread runs its job with the
// early restrictions on itself (no_new_privs, one more seccomp filter
// than the rest of the process, an empty bounding set where the process
// may empty it), while another thread of the process has none of them
// (control); and the job's wait for the detach returns only after the
// main thread's detach ran, with its error.
func TestForkThreadRestrictedAlone(t *testing.T) {
	runtime.LockOSThread()
	own, err := os.ReadFile("/proc/thread-self/status")
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	ownFilters, err := strconv.Atoi(threadStatus(t, string(own), "Seccomp_filters"))
	if err != nil {
		t.Skipf("kernel shows no seccomp filter count: %v", err)
	}

	ft := startForkThread()
	var detached atomic.Bool
	started := make(chan struct{})
	var status string
	var boundErr, awaitErr error
	var sawDetached bool
	refused := errors.New("detach refused")
	code, err := ft.runOnForkThread(func(ft *forkThread) int {
		b, _ := os.ReadFile("/proc/thread-self/status")
		status, boundErr = string(b), ft.early.boundErr
		if ft.early.err != nil {
			awaitErr = ft.early.err
			close(started)
			return 1
		}
		close(started)
		awaitErr = ft.awaitDetached()
		sawDetached = detached.Load()
		return 7
	}, func() error {
		<-started
		detached.Store(true)
		return refused
	})
	if err != nil || code != 7 {
		t.Fatalf("job: code %d, err %v (%v)", code, err, awaitErr)
	}
	if !errors.Is(awaitErr, refused) || !sawDetached {
		t.Errorf("the job's wait returned %v, detach seen %v; want the detach's error, after it ran", awaitErr, sawDetached)
	}
	if v := threadStatus(t, status, "NoNewPrivs"); v != "1" {
		t.Errorf("fork thread NoNewPrivs %s, want 1", v)
	}
	if v := threadStatus(t, status, "Seccomp_filters"); v != strconv.Itoa(ownFilters+1) {
		t.Errorf("fork thread has %s seccomp filters, the test's thread %d: want one more", v, ownFilters)
	}
	if boundErr == nil {
		if v := threadStatus(t, status, "CapBnd"); strings.Trim(v, "0") != "" {
			t.Errorf("fork thread bounding set %s, want empty", v)
		}
	}
	// Control: the restrictions stayed on the fork thread.
	runtime.LockOSThread()
	after, err := os.ReadFile("/proc/thread-self/status")
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	if v := threadStatus(t, string(after), "Seccomp_filters"); v != strconv.Itoa(ownFilters) {
		t.Errorf("another thread of the process has %s seccomp filters, had %d: the restrictions leaked", v, ownFilters)
	}
}

// TestLoopbackUpWithoutNetwork: PID 1 brings the loopback device of its
// network namespace up before its config; a run without network (cold,
// and on a warm stage) finds it up, and a run with network, whose stage
// shares the host's namespace and cannot, reports no failure for it.
func TestLoopbackUpWithoutNetwork(t *testing.T) {
	requireLinuxBackend(t)
	check := func(t *testing.T) {
		out, output := run(t, Spec{Argv: []string{"cat", "/sys/class/net/lo/flags"}})
		if out.ExitCode != 0 {
			t.Fatalf("reading lo's flags inside failed: %s", output)
		}
		flags, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(output), "0x"), 16, 32)
		if err != nil || flags&1 == 0 {
			t.Errorf("lo inside is not up: flags %q (%v)", output, err)
		}
		for _, m := range out.Mechanisms {
			if m.Name == "loopback" {
				t.Errorf("without network: %s %s", m.State, m.Detail)
			}
		}
		out, output = run(t, Spec{Argv: []string{"true"}, Network: true})
		if out.ExitCode != 0 {
			t.Fatalf("run with network failed: %s", output)
		}
		for _, m := range out.Mechanisms {
			if m.Name == "loopback" {
				t.Errorf("with network: %s %s", m.State, m.Detail)
			}
		}
	}
	t.Run("cold", check)
	t.Run("warm", func(t *testing.T) {
		keepWarm(t) // warm_linux_test.go
		before := testPool.os.stages.claims.Load()
		check(t) // the first runs start cold and leave warm stages behind
		check(t)
		if testPool.os.stages.claims.Load() == before {
			t.Error("no run used a warm stage")
		}
	})
}

// TestLeftoversKilledBeforeTheEnd: PID 1 kills what the command left
// running before it reports the end, which a long-lived caller (warm
// stages on) returns on before PID 1 and its namespace are gone: a
// daemon the command started is dead when the run returns. PID 1 skips
// the kill when it has no child left (nothing else can be left then);
// here it has one. Control: uncontained, the daemon outlives its parent.
func TestLeftoversKilledBeforeTheEnd(t *testing.T) {
	requireLinuxBackend(t)
	if _, err := exec.LookPath("pgrep"); err != nil {
		t.Skip("needs pgrep (procps)")
	}
	keepWarm(t)                     // warm_linux_test.go
	script, mark := daemonScript(7) // contain_proc_linux_test.go
	for i := 0; i < 3; i++ {        // cold, then on warm stages
		out, output := run(t, Spec{Argv: []string{"sh", "-c", script}})
		if out.ExitCode != 0 {
			t.Fatalf("run %d: the contained daemon did not start: %s", i, output)
		}
		if pids := findProcs("sleep\x00" + mark); len(pids) > 0 {
			t.Fatalf("run %d: the daemon %v still runs when the run returned", i, pids)
		}
	}
	daemonOutlivesUncontained(t, script, mark)
}
