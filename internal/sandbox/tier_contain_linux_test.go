package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// tiersHere are the Linux tiers the containment table runs under. With
// user namespaces both must work (in CI a tier that cannot run fails the
// test); without them the linux tier must fail and the landlock tier work.
func tiersHere(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	_, linuxErr := (linuxBackend{}).probe(ctx)
	_, llErr := (landlockBackend{}).probe(ctx)
	return sandboxtest.Tiers(t,
		sandboxtest.Tier{Name: BackendLinux, Err: linuxErr, Userns: true},
		sandboxtest.Tier{Name: BackendLandlock, Err: llErr})
}

// tierCase is one paired containment case: the contained run must not
// have its effect and the same command uncontained must have it.
type tierCase struct {
	name string
	argv []string
	// spec adjusts the contained run (limits, network).
	spec func(*Spec)
	// landed reports whether the effect reached the host, for cases judged
	// by the host's state; cleanup undoes the control's effect.
	landed  func() bool
	cleanup func()
	// marker, when set, must not appear in the contained output and must
	// appear in the control's.
	marker string
	// rootOnly says why the control cannot succeed for an ordinary user.
	rootOnly string
	// limits names the tiers that cannot contain this case, and why.
	limits map[string]string
}

// world is the host the cases attack: a home holding credentials (with the
// workspace inside it, as on a developer's machine), a directory outside
// every view, loopback listeners and a victim process.
type world struct {
	home, work, outside, helperDir string
	marker                         string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{home: sandboxtest.Dir(t), outside: sandboxtest.Dir(t), marker: fmt.Sprintf("TOP-SECRET-%d", os.Getpid())}
	w.helperDir = filepath.Dir(helperPath(t))
	w.work = filepath.Join(w.home, "src", "proj")
	if err := os.MkdirAll(w.work, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", w.home) // the masks and the view follow the user's home
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(w.outside, "cfg"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(w.home, ".local", "state"))
	t.Setenv("IOH_STATE_DIR", "")
	return w
}

// credentialFiles are the files of the issue found readable before the
// read view: each is written into the world's home.
var credentialFiles = []string{
	".ssh/id_ed25519", ".aws/credentials", ".docker/config.json", ".gnupg/private-keys-v1.d/k.key",
	".netrc", ".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json", ".bash_history",
	".python_history", ".psql_history", ".mysql_history", ".pgpass", ".vault-token",
	".m2/settings-security.xml", ".gradle/gradle.properties", ".gem/credentials",
	".config/rclone/rclone.conf", ".config/hub", ".claude/.credentials.json", ".codex/auth.json",
	".local/state/ioh/traces.db",
}

func (w *world) readCases(t *testing.T, h string) []tierCase {
	t.Helper()
	var cs []tierCase
	add := func(name, p string) {
		cs = append(cs, tierCase{name: "read " + name, argv: []string{h, helperArg, "read", p}, marker: w.marker})
	}
	write := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(w.marker+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range credentialFiles {
		p := filepath.Join(w.home, rel)
		write(p)
		add("~/"+rel, p)
	}
	cfg := filepath.Join(w.outside, "cfg", "ioh", "config.yaml")
	write(cfg)
	add("user config outside ~/.config", cfg)
	cs = append(cs, tierCase{name: "read /etc/shadow", argv: []string{h, helperArg, "read", "/etc/shadow"}, marker: "root:",
		rootOnly: "only root can read /etc/shadow outside the sandbox"})
	if sandboxtest.IsRoot() {
		p := fmt.Sprintf("/root/.ioh-root-only-%d", os.Getpid())
		write(p)
		os.Chmod(p, 0o600)
		t.Cleanup(func() { os.Remove(p) })
		add("a root-only file", p)
	}
	return cs
}

func (w *world) writeCases(h string) []tierCase {
	exists := func(p string) func() bool {
		return func() bool { _, err := os.Lstat(p); return err == nil }
	}
	rm := func(p string) func() { return func() { os.Remove(p) } }
	uniq := fmt.Sprintf("ioh-tier-probe-%d", os.Getpid())
	var cs []tierCase
	for _, c := range []struct{ name, path, rootOnly string }{
		{"outside every root", filepath.Join(w.outside, "abs.txt"), ""},
		{"into HOME", filepath.Join(w.home, uniq), ""},
		{"into /tmp", filepath.Join("/tmp", uniq), ""},
		{"into /dev/shm", filepath.Join("/dev/shm", uniq), ""},
		{"into /etc", filepath.Join("/etc", uniq), "only root can write /etc outside the sandbox"},
	} {
		cs = append(cs, tierCase{name: "write " + c.name, argv: []string{h, helperArg, "write", c.path},
			landed: exists(c.path), cleanup: rm(c.path), rootOnly: c.rootOnly})
	}
	link := filepath.Join(w.work, "escape")
	os.Symlink(w.outside, link)
	sym := filepath.Join(w.outside, "sym.txt")
	cs = append(cs, tierCase{name: "write via symlink", argv: []string{h, helperArg, "write", filepath.Join(link, "sym.txt")},
		landed: exists(sym), cleanup: rm(sym)})
	target := filepath.Join(w.outside, "target.txt")
	os.WriteFile(target, []byte("original\n"), 0o666)
	hard := filepath.Join(w.work, "hard.txt")
	cs = append(cs, tierCase{name: "write via hardlink", argv: []string{h, helperArg, "link", target, hard},
		landed:  func() bool { b, _ := os.ReadFile(target); return string(b) != "original\n" },
		cleanup: func() { os.Remove(hard); os.WriteFile(target, []byte("original\n"), 0o666) }})
	return cs
}

// TestTierContainment runs the table in each tier with the stages
// re-executing this binary (a binary built without `make build`), and a
// part of it with the small init program (init_program_linux.go), cold
// and on stages started ahead of their run (warm_linux.go).
func TestTierContainment(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) { useReexec(t); tierContainment(t, tier, nil) })
		t.Run(tier+" with the small init program", func(t *testing.T) { useSmallInit(t); tierContainment(t, tier, smallInitCases) })
		t.Run(tier+" on warm stages", func(t *testing.T) {
			useSmallInit(t)
			keepWarm(t) // warm_linux_test.go
			before := testPool.os.stages.claims.Load()
			tierContainment(t, tier, smallInitCases)
			if testPool.os.stages.claims.Load() == before {
				t.Error("no run used a warm stage")
			}
		})
	}
}

// tierContainment runs the cases (those named in only, if set) and checks
// that the stages ran in the program this process chose (the small init
// program or this binary).
func tierContainment(t *testing.T, tier string, only map[string]bool) {
	h := helperPath(t)
	w := newWorld(t)
	sockDir := filepath.Join(w.home, ".docker", "run")
	os.MkdirAll(sockDir, 0o777)
	os.Chmod(w.home, 0o755)
	tcpAddr, udpAddr, dnsAddr, sock := echoServers(t, sockDir)
	victim := exec.Command("sleep", "600")
	victim.Env = append(os.Environ(), "IOH_VICTIM_MARK="+w.marker)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	pid := fmt.Sprint(victim.Process.Pid)
	// A host process with a secret on its command line (mysql -pPASSWORD).
	talker := exec.Command("sh", "-c", "sleep 600; : "+w.marker)
	if err := talker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { talker.Process.Kill(); talker.Wait() })
	talkerPid := fmt.Sprint(talker.Process.Pid)
	daemonSecs := fmt.Sprint(7000 + os.Getpid()%1000)
	daemonAlive := func() bool { return len(processesWithArgs("sleep", daemonSecs)) > 0 }

	cases := w.readCases(t, h)
	cases = append(cases, w.writeCases(h)...)
	cases = append(cases, w.metaCases(t, h)...) // tier_landlock_meta_linux_test.go
	cases = append(cases,
		tierCase{name: "tcp to a host listener", argv: []string{h, helperArg, "tcp", tcpAddr}},
		tierCase{name: "udp to a host listener", argv: []string{h, helperArg, "udp", udpAddr}},
		tierCase{name: "dns to a host resolver", argv: []string{h, helperArg, "dns", dnsAddr, "example.com"}},
		tierCase{name: "host unix socket", argv: []string{h, helperArg, "unix", sock}},
		tierCase{name: "see a host process", argv: []string{"test", "-d", "/proc/" + pid},
			limits: map[string]string{BackendLandlock: "no PID namespace without user namespaces: host processes are listed in /proc"}},
		tierCase{name: "signal a host process", argv: []string{h, helperArg, "kill", pid}},
		tierCase{name: "ptrace a host process", argv: []string{h, helperArg, "ptrace", pid}},
		tierCase{name: "read a host process's environment", argv: []string{h, helperArg, "read", "/proc/" + pid + "/environ"}, marker: w.marker},
		tierCase{name: "read a host process's command line", argv: []string{h, helperArg, "read", "/proc/" + talkerPid + "/cmdline"}, marker: w.marker,
			limits: map[string]string{BackendLandlock: "no PID namespace: /proc shows host processes' command lines"}},
		tierCase{name: "daemon outlives the run", argv: []string{"sh", "-c", "setsid sh -c '(sleep " + daemonSecs + " </dev/null >/dev/null 2>&1 &)' & wait; sleep 0.1"},
			landed: daemonAlive, cleanup: func() { killArgs("sleep", daemonSecs) }},
		tierCase{name: "chmod a host device node", argv: []string{"chmod", "0666", "/dev/null"}, rootOnly: "only root owns the host's /dev/null"},
		tierCase{name: "fork bomb", argv: []string{h, helperArg, "spawn", "60"}, spec: func(s *Spec) { s.Limits.Procs = 30 }},
		tierCase{name: "memory bomb", argv: []string{h, helperArg, "alloc", fmt.Sprint(256 << 20)}, spec: func(s *Spec) { s.Limits.Memory = 64 << 20 }},
	)
	for _, sc := range []string{"io_uring_setup", "bpf", "keyctl", "perf_event_open", "clone_newuser"} {
		cases = append(cases, tierCase{name: "syscall " + sc, argv: []string{h, helperArg, "syscall", sc}})
	}

	contained, counted := 0, 0
	var leaks []string
	for name := range only {
		if !slices.ContainsFunc(cases, func(c tierCase) bool { return c.name == name }) {
			t.Fatalf("no case %q", name)
		}
	}
	for _, c := range cases {
		if only != nil && !only[c.name] {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			s := Spec{Argv: c.argv, Dir: w.work, Writable: []string{w.work}, View: testView(w.helperDir), Backend: tier}
			if c.spec != nil {
				c.spec(&s)
			}
			out, output := runTier(t, s)
			wantInitProgram(t, out)
			held := out.ExitCode != 0
			switch {
			case c.landed != nil:
				held = !c.landed()
				if c.cleanup != nil {
					c.cleanup()
				}
			case c.marker != "":
				held = !strings.Contains(output, c.marker)
			}
			if c.rootOnly != "" && !sandboxtest.IsRoot() {
				t.Skipf("control skipped: %s", c.rootOnly)
			}
			ctl := exec.Command(c.argv[0], c.argv[1:]...)
			ctl.Dir = w.work
			ctlOut, ctlErr := ctl.CombinedOutput()
			ctlOK := ctlErr == nil
			switch {
			case c.landed != nil:
				ctlOK = c.landed()
				if c.cleanup != nil {
					c.cleanup()
				}
			case c.marker != "":
				ctlOK = strings.Contains(string(ctlOut), c.marker)
			}
			if !ctlOK {
				if strings.HasPrefix(c.name, "syscall ") {
					t.Skipf("control skipped: %s is refused outside the sandbox too on this machine (%v)", c.name, ctlErr)
				}
				t.Fatalf("uncontained control did not have the effect, so the case proves nothing: %v\n%s", ctlErr, ctlOut)
			}
			counted++
			if held {
				contained++
				return
			}
			if why := c.limits[tier]; why != "" {
				leaks = append(leaks, c.name+" (known: "+why+")")
				t.Logf("not contained in the %s tier, a known limit: %s", tier, why)
				return
			}
			leaks = append(leaks, c.name)
			t.Errorf("not contained in the %s tier (exit %d):\n%s", tier, out.ExitCode, output)
		})
	}
	mode := "with user namespaces"
	if sandboxtest.NoUserns() {
		mode = "without user namespaces"
	}
	who := "an ordinary user"
	if sandboxtest.IsRoot() {
		who = "root"
	}
	if only != nil {
		t.Logf("containment %s tier with the small init program, %s, as %s: %d of %d contained", tier, mode, who, contained, counted)
		return
	}
	line := fmt.Sprintf("containment %s tier, %s, as %s: %d of %d contained", tier, mode, who, contained, counted)
	if len(leaks) > 0 {
		line += "; not contained: " + strings.Join(leaks, ", ")
	}
	t.Log(line)
	if f := os.Getenv("IOH_CONTAIN_COUNTS"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666); err == nil {
			fmt.Fprintln(fh, line)
			fh.Close()
		}
	}
}

// runTier runs s (its Backend set) and returns the outcome and output.
func runTier(t *testing.T, s Spec) (*Outcome, string) {
	t.Helper()
	var buf bytes.Buffer
	s.Stdout, s.Stderr = &buf, &buf
	withView(&s) // view_test.go
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := testRunner().Run(ctx, &s)
	if err != nil {
		t.Fatalf("contained %q in the %s tier: %v", s.Argv, s.Backend, err)
	}
	if out.Backend != s.Backend {
		t.Fatalf("ran under %s, want %s", out.Backend, s.Backend)
	}
	return out, buf.String()
}

// processesWithArgs lists the pids whose command line is exactly argv.
func processesWithArgs(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killArgs(argv ...string) {
	for _, pid := range processesWithArgs(argv...) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestTierCaps: in each tier a wall cap ends the run and says so, and
// nothing the command started outlives it; an output flood is kept as
// head and tail and runs to its end.
func TestTierCaps(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			h := helperPath(t)
			work := sandboxtest.Dir(t)
			secs := fmt.Sprint(8000 + os.Getpid()%1000)
			out, output := runTier(t, Spec{Argv: []string{"sh", "-c", "setsid sleep " + secs + " & " + h + " " + helperArg + " spin 60s"},
				Dir: work, Writable: []string{work}, View: testView(filepath.Dir(h)), Backend: tier,
				Limits: Limits{Wall: 300 * time.Millisecond}})
			if out.CapHit != CapWall || out.ExitCode == 0 {
				t.Errorf("wall cap: cap %q exit %d\n%s", out.CapHit, out.ExitCode, output)
			}
			if left := processesWithArgs("sleep", secs); len(left) > 0 {
				killArgs("sleep", secs)
				t.Errorf("processes %v outlived a capped run", left)
			}
			out, output = runTier(t, Spec{Argv: []string{"head", "-c", "4000000", "/dev/zero"}, Dir: work, Backend: tier,
				Limits: Limits{Output: 64 << 10}})
			keptHeadTail(t, out, output, 64<<10, 4000000)
		})
	}
}

// TestLandlockRunnerOutOfReach: the landlock tier's runner, which kills
// the command's whole tree at the end, lies outside the command's Landlock
// domain, so the command cannot kill it to escape that.
func TestLandlockRunnerOutOfReach(t *testing.T) {
	tiersHere(t)
	work := sandboxtest.Dir(t)
	out, output := runTier(t, Spec{Argv: []string{"sh", "-c", "kill -KILL $PPID && echo killed-runner; echo done"},
		Dir: work, Writable: []string{work}, Backend: BackendLandlock})
	if out.ExitCode != 0 || strings.Contains(output, "killed-runner") || !strings.Contains(output, "done") {
		t.Errorf("the command reached its runner: exit %d signal %q\n%s", out.ExitCode, out.Signal, output)
	}
	ctl, err := exec.Command("sh", "-c", "kill -0 $PPID && echo reachable").CombinedOutput()
	if err != nil || !strings.Contains(string(ctl), "reachable") {
		t.Fatalf("uncontained control could not signal its parent, so the case proves nothing: %v %s", err, ctl)
	}
}
