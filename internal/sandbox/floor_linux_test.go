package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestContainStage runs over an overlay view: changes visible, deletions
// hidden, the command's writes discarded, the workspace untouched.
func TestContainStage(t *testing.T) {
	requireLinuxBackend(t)
	ws := sandboxtest.Dir(t)
	writeTree(t, ws, map[string]string{"keep": "k\n", "edit": "old\n", "gone": "g\n", "sub/inner": "i\n"})
	st, err := NewStage(ws, []Change{
		{Path: "edit", Content: []byte("new\n")},
		{Path: "gone", Delete: true},
		{Path: "sub/added", Content: []byte("a\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out, output := run(t, Spec{Argv: []string{"sh", "-c", "cat keep edit sub/added; ls; echo w > scratch; cat scratch; rm keep; pwd"}, Stage: st})
	want := "k\nnew\na\nedit\nkeep\nsub\nw\n" + st.Lower() + "\n"
	if out.ExitCode != 0 {
		t.Fatalf("exit %d: %s", out.ExitCode, output)
	}
	if diff := cmp.Diff(output, want); diff != "" {
		t.Errorf("view (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(readTree(t, ws), map[string]string{"keep": "k\n", "edit": "old\n", "gone": "g\n", "sub/inner": "i\n"}); diff != "" {
		t.Errorf("workspace changed (-got +want):\n%s", diff)
	}
	if !hasMechanism(out, "overlay-stage", StateApplied) {
		t.Errorf("mechanisms %+v lack an applied overlay-stage", out.Mechanisms)
	}
}

func hasMechanism(o *Outcome, name, state string) bool {
	for _, m := range o.Mechanisms {
		if m.Name == name && m.State == state {
			return true
		}
	}
	return false
}

func TestFloorBackend(t *testing.T) {
	work := sandboxtest.Dir(t)
	writeTree(t, work, map[string]string{"file": "orig\n"})
	t.Setenv("OPENAI_API_KEY", "sk-floor-leak")
	var buf strings.Builder
	r := testRunner()
	out, err := r.Run(context.Background(), &Spec{
		Argv:    []string{"sh", "-c", "cat file; echo changed > file; env | grep -c sk-floor-leak; echo $HOME"},
		Dir:     work,
		Backend: BackendFloor,
		Stdout:  &buf, Stderr: &buf,
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || lines[0] != "orig" || lines[1] != "0" || strings.HasPrefix(lines[2], os.Getenv("HOME")) {
		t.Errorf("floor output %q: want the file, no key, a private HOME", lines)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "file")); string(b) != "orig\n" {
		t.Errorf("the floor wrote the real working directory: %q", b)
	}
	if out.Backend != BackendFloor || !hasMechanism(out, "private-workdir", StateApplied) || !hasMechanism(out, "network-isolation", StateUnavailable) {
		t.Errorf("outcome %+v", out)
	}

	off := os.Getpid() % 99999
	mark := fmt.Sprint(800000 + off)
	// A child left running in the run's group when the command exits.
	script := fmt.Sprintf(`m=$((800000 + %d)); sleep $m & while ! pgrep -f "^sleep $m\$" >/dev/null; do sleep 0.02; done; echo up`, off)
	var up strings.Builder
	out, err = r.Run(context.Background(), &Spec{Argv: []string{"sh", "-c", script}, Dir: work, Writable: []string{work}, Backend: BackendFloor, Stdout: &up})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 0 || up.String() != "up\n" {
		t.Errorf("group child: %+v, output %q", out, up.String())
	}
	// SIGKILL to the group is asynchronous: give the kernel a moment.
	var pids []int
	for i := 0; i < 250; i++ {
		if pids = findProcs("sleep\x00" + mark); len(pids) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) > 0 {
		t.Errorf("a process of the floor's group outlived the run: %v", pids)
	}
	out, err = r.Run(context.Background(), &Spec{Argv: []string{"sleep", "30"}, Dir: work, Writable: []string{work}, Backend: BackendFloor, Limits: Limits{Wall: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if out.CapHit != CapWall || out.Signal != "SIGKILL" {
		t.Errorf("wall cap: %+v", out)
	}
}

func TestRunnerBackends(t *testing.T) {
	r := testRunner()
	for _, b := range []string{BackendMacOS, BackendWindows} {
		if _, err := r.Run(context.Background(), &Spec{Argv: []string{"true"}, Backend: b}); !errors.Is(err, ErrBackendUnavailable) {
			t.Errorf("backend %s on linux: %v, want ErrBackendUnavailable", b, err)
		}
	}
	if _, err := r.Run(context.Background(), &Spec{Argv: []string{"true"}, Backend: "chroot"}); !errors.Is(err, ErrUnknownBackend) {
		t.Errorf("unknown backend: %v", err)
	}
	rep := Doctor(context.Background())
	if len(rep.Backends) != 3 || rep.Backends[0].Name != BackendLinux || rep.Backends[1].Name != BackendLandlock || rep.Backends[2].Name != BackendFloor {
		t.Fatalf("doctor backends %+v", rep.Backends)
	}
	if rep.Backends[0].Works {
		if rep.Backend != BackendLinux || !hasMechanism(&Outcome{Mechanisms: rep.Backends[0].Mechanisms}, "seccomp", StateApplied) {
			t.Errorf("doctor: %+v", rep)
		}
	} else if rep.Backend == BackendLinux || !strings.Contains(rep.Reason, "linux") {
		t.Errorf("doctor must say why linux was passed over: %+v", rep)
	}
	// A command that cannot be found is the command's failure (127), not
	// a setup failure and not a downgrade.
	out, err := r.Run(context.Background(), &Spec{Argv: []string{"no-such-command-ioh"}, Writable: []string{t.TempDir()}, View: testView()})
	if err != nil || out.ExitCode != 127 || out.Downgrade != "" {
		t.Errorf("missing command: %+v, %v; want exit 127", out, err)
	}
}

// TestFloorSaysWhatItKills: the floor kills its process group, and its
// process-group mechanism says that a process leaving the group (a setsid
// daemon) outlives the run, which it does (the daemon is killed after).
func TestFloorSaysWhatItKills(t *testing.T) {
	work := sandboxtest.Dir(t)
	script, mark := daemonScript(7)
	var buf strings.Builder
	out, err := testRunner().Run(context.Background(), &Spec{Argv: []string{"sh", "-c", script}, Dir: work, Writable: []string{work}, Backend: BackendFloor, Stdout: &buf, Stderr: &buf})
	if err != nil {
		t.Fatal(err)
	}
	pids := findProcs("sleep\x00" + mark)
	for _, p := range pids {
		if pr, err := os.FindProcess(p); err == nil {
			pr.Kill()
		}
	}
	if out.ExitCode != 0 {
		t.Fatalf("the daemon did not start: exit %d: %s", out.ExitCode, buf.String())
	}
	var detail string
	for _, m := range out.Mechanisms {
		if m.Name == "process-group" {
			detail = m.Detail
		}
	}
	if len(pids) > 0 && !strings.Contains(detail, "survives the run") {
		t.Errorf("a setsid daemon outlived the floor's run, but its process-group mechanism says %q", detail)
	}
	if len(pids) == 0 && strings.Contains(detail, "survives the run") {
		t.Errorf("the floor killed the setsid daemon, but its process-group mechanism says it survives: %q", detail)
	}
}
