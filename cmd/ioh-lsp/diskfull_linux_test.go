package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// diskFullChild makes the test binary, re-executed in a private mount
// namespace, the side that mounts the small tmpfs and runs the scenario;
// its value is the ioh-lsp binary to run.
const diskFullChild = "IOH_TEST_DISKFULL_BIN"

// exitSkipChild: the child could not mount the tmpfs (it prints why).
const exitSkipChild = 77

// TestDiskFullInterruptsAndResumes: the state directory is a 2 MiB tmpfs
// that fills up mid-run. The run stops as interrupted with exit 6 (not
// provider_failed, exit 5), the message names the state directory and the
// cause, and the run stays resumable: once space is freed, `resume`
// finishes it with the same files, outcome, steps and tokens as an
// uninterrupted run.
func TestDiskFullInterruptsAndResumes(t *testing.T) {
	if bin := os.Getenv(diskFullChild); bin != "" {
		diskFullScenario(t, bin)
		return
	}
	if testing.Short() {
		t.Skip("builds the binary and runs it")
	}
	bin := buildBinary(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullInterruptsAndResumes$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), diskFullChild+"="+bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if !sandboxtest.IsRoot() {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		t.Logf("child:\n%s", out.String())
	case errors.As(err, &ee) && ee.ExitCode() == exitSkipChild:
		t.Skipf("no size-limited filesystem here: %s", strings.TrimSpace(out.String()))
	case ee == nil:
		// The namespace itself could not be made (no user namespaces).
		t.Skipf("cannot make a private mount namespace for a tmpfs: %v", err)
	default:
		t.Fatalf("child: %v\n%s", err, out.String())
	}
}

// diskFullScenario runs in the private mount namespace.
func diskFullScenario(t *testing.T, bin string) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Printf("make mounts private: %v\n", err)
		os.Exit(exitSkipChild)
	}
	state := t.TempDir()
	if err := unix.Mount("tmpfs", state, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=2m,mode=0700"); err != nil {
		fmt.Printf("mount a 2 MiB tmpfs: %v\n", err)
		os.Exit(exitSkipChild)
	}
	defer unix.Unmount(state, unix.MNT_DETACH)

	// The reference: the same task, uninterrupted, its state on disk; its
	// verified change is left pending, then approved.
	var ref, refApplied runEnd
	{
		dir, env := newFaultWorkspace(t)
		cmd := exec.Command(bin, "run", "task.ioh.yaml", "--approve", "never", "--json")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("reference run: %v", err)
		}
		id := runIDOf(t, out)
		ref = finalState(t, bin, dir, env, id)
		approveRun(t, bin, dir, env, id)
		refApplied = finalState(t, bin, dir, env, id)
	}
	if ref.outcome != "awaiting_approval" || refApplied.outcome != "applied" || !strings.Contains(refApplied.files["main.go"], "// added\n// twice\n// end") {
		t.Fatalf("reference run: %+v, approved: %+v", ref, refApplied)
	}

	dir, env := newFaultWorkspace(t)
	env = append(env, "IOH_STATE_DIR="+state) // the later value wins
	cmd, sc, stderr := startRun(t, bin, dir, env)
	id := awaitEvent(t, sc, "tool_result", 2)
	filler := filepath.Join(state, "filler")
	fill(t, filler)
	for sc.Scan() { // the rest of the run's events
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("run on a full disk: %v, want exit %d (interrupted)\n%s", err, exitInterrupted, stderr)
	}
	msg := stderr.String()
	t.Logf("the interrupted run's stderr:\n%s", msg)
	for _, want := range []string{state, "disk is full", "interrupted", "ioh-lsp resume " + id} {
		if !strings.Contains(msg, want) {
			t.Errorf("the run's message does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "provider_failed") {
		t.Errorf("a storage failure reported as the provider's:\n%s", msg)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mid := finalState(t, bin, dir, env, id)
	if mid.outcome != "interrupted" || mid.steps >= ref.steps || mid.tokens >= ref.tokens {
		t.Fatalf("after the disk filled: %+v, want interrupted short of %+v", mid, ref)
	}
	res := exec.Command(bin, "resume", id, "--approve", "never")
	res.Dir, res.Env = dir, env
	if out, err := res.CombinedOutput(); err != nil {
		t.Fatalf("resume after freeing space: %v\n%s", err, out)
	}
	if diff := cmp.Diff(finalState(t, bin, dir, env, id), ref, cmp.AllowUnexported(runEnd{})); diff != "" {
		t.Errorf("resumed run differs from the uninterrupted one (-got +want):\n%s", diff)
	}
	approveRun(t, bin, dir, env, id)
	if diff := cmp.Diff(finalState(t, bin, dir, env, id), refApplied, cmp.AllowUnexported(runEnd{})); diff != "" {
		t.Errorf("approved, the resumed run's change differs from the uninterrupted one's (-got +want):\n%s", diff)
	}
}

// approveRun applies a run's pending change.
func approveRun(t *testing.T, bin, dir string, env []string, id string) {
	t.Helper()
	cmd := exec.Command(bin, "approve", id)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("approve %s: %v\n%s", id, err, out)
	}
}

// fill writes path until the filesystem has no block left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range []int{64 << 10, 4 << 10, 1} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill: %v", err)
				}
				break
			}
		}
	}
}
