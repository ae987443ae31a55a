package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/reaper"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// viewProbe is what one thread could do under a landlock ruleset.
type viewProbe struct {
	readInside, listDir, readFile, readSecret error
}

// probeView restricts a fresh locked thread to a landlock tier ruleset
// over view (typed as types says) and tries each access from it; the
// thread ends restricted with its goroutine. With restrict false it is
// the uncontained control.
func probeView(t *testing.T, restrict bool, view []string, types string, dirA, fileB, secret string) (viewProbe, error) {
	t.Helper()
	type result struct {
		p   viewProbe
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread may end restricted
		if restrict {
			cfg := &initConfig{Tier: BackendLandlock, Network: true, ReadView: view, ReadViewTypes: types}
			if _, err := restrictThreadLandlock(cfg); err != nil {
				ch <- result{err: err}
				return
			}
		}
		var p viewProbe
		_, p.readInside = os.ReadFile(filepath.Join(dirA, "inside"))
		_, p.listDir = os.ReadDir(dirA)
		_, p.readFile = os.ReadFile(fileB)
		_, p.readSecret = os.ReadFile(secret)
		ch <- result{p: p}
	}()
	select {
	case r := <-ch:
		return r.p, r.err
	case <-time.After(time.Minute):
		t.Fatal("the probing thread did not answer")
		return viewProbe{}, nil
	}
}

// TestLandlockViewTypes: the runner takes each view entry's type from the
// caller (ReadViewTypes) instead of a stat per entry, and a type that is
// out of date (the caller's view is cached) never widens what is
// readable: a file typed as a directory gets the file rights alone (the
// kernel refuses directory rights on it, the builder checks that very
// descriptor), a directory typed as a file can be read below but not
// listed; a sibling outside the view stays unreadable in every case.
// Control: the same accesses from an unrestricted thread all work. A
// types string that does not fit the view is an error, not a guess.
func TestLandlockViewTypes(t *testing.T) {
	if landlockABI() < 1 {
		sandboxtest.Unavailable(t, "the kernel has no Landlock")
	}
	root := t.TempDir()
	dirA, fileB, secret := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "secret")
	if err := os.Mkdir(dirA, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dirA, "inside"), fileB, secret} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	view := []string{dirA, fileB}
	ctl, err := probeView(t, false, view, "", dirA, fileB, secret)
	if err != nil || ctl.readInside != nil || ctl.listDir != nil || ctl.readFile != nil || ctl.readSecret != nil {
		t.Fatalf("uncontained control failed, so the cases prove nothing: %+v %v", ctl, err)
	}
	denied := func(err error) bool { return errors.Is(err, syscall.EACCES) }
	for _, c := range []struct {
		name, types string
		listable    bool
	}{
		{"types from the caller", "df", true},
		{"no types: the runner looks", "", true},
		{"stale types: directory as file, file as directory", "fd", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := probeView(t, true, view, c.types, dirA, fileB, secret)
			if err != nil {
				t.Fatalf("ruleset: %v", err)
			}
			if p.readInside != nil || p.readFile != nil {
				t.Errorf("the view is not readable: below the directory %v, the file %v", p.readInside, p.readFile)
			}
			if !denied(p.readSecret) {
				t.Errorf("a file outside the view was readable (%v)", p.readSecret)
			}
			if c.listable && p.listDir != nil {
				t.Errorf("the view's directory cannot be listed: %v", p.listDir)
			}
			if !c.listable && !denied(p.listDir) {
				t.Errorf("a directory typed as a file was listable (%v): its rule is wider than a file's", p.listDir)
			}
		})
	}
	for _, bad := range []string{"d", "dx"} {
		if _, err := probeView(t, true, view, bad, dirA, fileB, secret); err == nil {
			t.Errorf("types %q for %d entries were accepted", bad, len(view))
		}
	}
}

// TestViewTypes: the caller's types follow symlinks as the runner's open
// does, and a missing path is a file (its rule is skipped).
func TestViewTypes(t *testing.T) {
	root := t.TempDir()
	d, f, l := filepath.Join(root, "d"), filepath.Join(root, "f"), filepath.Join(root, "l")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(d, l); err != nil {
		t.Fatal(err)
	}
	if got := new(viewKindCache).viewTypes([]string{d, f, l, filepath.Join(root, "missing")}); got != "dfdf" {
		t.Errorf("viewTypes = %q, want dfdf", got)
	}
}

// TestWarmRunnerSignalledBeforeItsRun: a warm landlock runner handles
// SIGTERM (the caller's death signal) from its start, before its config;
// one signalled while it waits must end at once, as the signal's default
// action ended it before, and not be claimed later (it would start the
// run and report it killed). Control: the next warm runner, not
// signalled, is claimed and runs its command.
func TestWarmRunnerSignalledBeforeItsRun(t *testing.T) {
	tiers := tiersHere(t)
	if tiers[len(tiers)-1] != BackendLandlock {
		t.Fatal("no landlock tier")
	}
	useReexec(t)
	keepWarm(t)
	dir := sandboxtest.Dir(t)
	spec := Spec{Argv: []string{"sh", "-c", "echo ran"}, Dir: dir, Writable: []string{dir}, Backend: BackendLandlock}
	runTier(t, spec)
	kind := kindOf(BackendLandlock)
	pid := waitWarm(t, kind)
	// Signalled once it catches SIGTERM: before, the default action
	// would end it whatever the runner does.
	deadline := time.Now().Add(30 * time.Second)
	for !catchesSignal(pid, syscall.SIGTERM) {
		if time.Now().After(deadline) {
			t.Fatalf("the warm runner %d never caught SIGTERM", pid)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Gone when every thread is: the main thread may be a zombie while
	// another still runs and holds the status pipe open, and a runner
	// claimed then (dying, not idle yet) only makes the caller start
	// its run again, cold.
	deadline = time.Now().Add(30 * time.Second)
	for !threadsGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the warm runner %d still runs (state %c) after SIGTERM", pid, reaper.ProcState(pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitEnding(t, pid) // what claimWarm asks
	out, output := runTier(t, spec)
	if out.ExitCode != 0 || !strings.Contains(output, "ran") {
		t.Fatalf("after the warm runner was signalled: exit %d: %q", out.ExitCode, output)
	}
	if testPool.os.stages.lastClaim.Load() == int64(pid) {
		t.Fatal("the signalled warm runner was claimed")
	}
	next := waitWarm(t, kind)
	before := testPool.os.stages.claims.Load()
	out, output = runTier(t, spec)
	if testPool.os.stages.claims.Load() != before+1 || testPool.os.stages.lastClaim.Load() != int64(next) {
		t.Fatal("control: the warm runner that was not signalled was not claimed")
	}
	if out.ExitCode != 0 || !strings.Contains(output, "ran") {
		t.Fatalf("control on a warm runner: exit %d: %q", out.ExitCode, output)
	}
}

// threadsGone reports whether no thread of process pid is left but a
// zombie main thread.
func threadsGone(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true
	}
	for _, e := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, e.Name()))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) STATE …; comm may hold spaces or parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		if st := b[i+2]; st != 'Z' && st != 'X' {
			return false
		}
	}
	return true
}

// catchesSignal reports whether process pid has a handler for sig
// (SigCgt in /proc/PID/status).
func catchesSignal(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

// TestLandlockPrebuiltRuleset: rules built ahead from a hinted view are
// used only for a run that asks for exactly that view, and only while
// each path still names the file the rule was made from. Each case that
// must not use them has an access that they would have allowed: a path
// outside the run's view, or the old file of a path replaced since.
func TestLandlockPrebuiltRuleset(t *testing.T) {
	if landlockABI() < 1 {
		sandboxtest.Unavailable(t, "the kernel has no Landlock")
	}
	root := t.TempDir()
	dirA, fileB, old, later := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "b.old"), filepath.Join(root, "later")
	if err := os.Mkdir(dirA, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dirA, "inside"), fileB} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hint := viewHint{network: true, types: "dff", view: []string{dirA, fileB, later}}
	// run prebuilds from hint on a fresh locked thread, calls between,
	// then restricts the thread to cfg and tries to read each of paths.
	run := func(cfg *initConfig, between func(), paths ...string) (ahead bool, errs []error) {
		type result struct {
			ahead bool
			errs  []error
			err   error
		}
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends restricted
			if prebuilt = prebuildRuleset(hint); prebuilt == nil {
				ch <- result{err: errors.New("nothing was prebuilt")}
				return
			}
			between()
			ms, err := restrictThreadLandlock(cfg)
			if err != nil {
				ch <- result{err: err}
				return
			}
			r := result{ahead: strings.Contains(ms[0].Detail, "built before")}
			for _, p := range paths {
				_, err := os.ReadFile(p)
				r.errs = append(r.errs, err)
			}
			ch <- r
		}()
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.ahead, r.errs
	}
	same := func() *initConfig {
		return &initConfig{Tier: BackendLandlock, Network: true, ReadView: hint.view, ReadViewTypes: hint.types}
	}
	denied := func(err error) bool { return errors.Is(err, syscall.EACCES) }

	ahead, errs := run(same(), func() {}, filepath.Join(dirA, "inside"), fileB)
	if !ahead || errs[0] != nil || errs[1] != nil {
		t.Errorf("same view: used %v, reads %v; want the prebuilt rules used and the view readable", ahead, errs)
	}

	other := &initConfig{Tier: BackendLandlock, Network: true, ReadView: []string{dirA}, ReadViewTypes: "d"}
	ahead, errs = run(other, func() {}, filepath.Join(dirA, "inside"), fileB)
	if ahead || errs[0] != nil || !denied(errs[1]) {
		t.Errorf("another view: used %v, reads %v; want fresh rules: the view readable, the hinted-only file refused", ahead, errs)
	}

	noNet := same()
	noNet.Network = false
	if ahead, _ = run(noNet, func() {}); ahead {
		t.Error("rules prebuilt for a run with network served one without")
	}

	replace := func() {
		if err := os.Rename(fileB, old); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(fileB, []byte("new"), 0o644); err != nil {
			t.Error(err)
		}
	}
	ahead, errs = run(same(), replace, fileB, old)
	if ahead || errs[0] != nil || !denied(errs[1]) {
		t.Errorf("path replaced after the prebuild: used %v, reads %v; want fresh rules: the new file readable, the old one (now elsewhere) refused", ahead, errs)
	}
	if _, err := os.ReadFile(old); err != nil {
		t.Fatalf("uncontained control cannot read the old file: %v", err)
	}

	appear := func() {
		if err := os.WriteFile(later, []byte("x"), 0o644); err != nil {
			t.Error(err)
		}
	}
	ahead, errs = run(same(), appear, later)
	if ahead || errs[0] != nil {
		t.Errorf("a path missing at the prebuild and there now: used %v, read %v; want fresh rules that grant it", ahead, errs)
	}
}

// TestLandlockHintArgs: the hint survives the runner's command line, and
// a malformed one is no hint.
func TestLandlockHintArgs(t *testing.T) {
	cfg := &initConfig{Network: true, ReadView: []string{"/usr", "/etc/hosts"}, ReadViewTypes: "df"}
	h, ok := parseHint(landlockHint(cfg))
	if !ok || !h.network || h.types != "df" || strings.Join(h.view, ",") != "/usr,/etc/hosts" {
		t.Fatalf("round trip: %+v %v", h, ok)
	}
	for _, bad := range [][]string{
		nil,
		{"--other", "0", "d", "/usr"},
		{hintArg, "2", "d", "/usr"},
		{hintArg, "0", "dd", "/usr"},
		{hintArg, "0", "d", "usr"},
		{hintArg, "0", "d", "/usr/../etc"},
	} {
		if _, ok := parseHint(bad); ok {
			t.Errorf("hint %q accepted", bad)
		}
	}
	if a := landlockHint(&initConfig{ReadView: []string{"/usr"}}); a != nil {
		t.Errorf("a view without types gave hint %q", a)
	}
}

// TestWarmRunnerBuildsItsRulesAhead: a warm landlock runner gets the
// current run's view on its command line and builds those rules before
// its run; the next run with that view uses them (and reads its
// workspace), a run with another view does not, and cannot read the
// first workspace, which the prebuilt rules granted. A one-shot caller's
// runner builds its rules from its config only.
func TestWarmRunnerBuildsItsRulesAhead(t *testing.T) {
	tiers := tiersHere(t)
	if tiers[len(tiers)-1] != BackendLandlock {
		t.Fatal("no landlock tier")
	}
	useReexec(t)
	w1, w2 := sandboxtest.Dir(t), sandboxtest.Dir(t)
	file := filepath.Join(w1, "file")
	if err := os.WriteFile(file, []byte("in w1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := func(dir string) Spec {
		return Spec{Argv: []string{"sh", "-c", "cat " + file}, Dir: dir, Writable: []string{dir}, Backend: BackendLandlock}
	}
	ahead := func(out *Outcome) bool {
		for _, m := range out.Mechanisms {
			if m.Name == "landlock-fs" {
				return strings.Contains(m.Detail, "built before")
			}
		}
		t.Fatal("no landlock-fs mechanism")
		return false
	}
	// A one-shot caller's runner gets no hint: it would check at the
	// run's cost rules it just built.
	if out, output := runTier(t, spec(w1)); ahead(out) || out.ExitCode != 0 {
		t.Fatalf("one-shot run: rules built ahead %v, exit %d: %q", ahead(out), out.ExitCode, output)
	}
	keepWarm(t)
	runTier(t, spec(w1))
	kind := kindOf(BackendLandlock)
	waitWarm(t, kind)
	before := testPool.os.stages.claims.Load()
	out, output := runTier(t, spec(w1))
	if testPool.os.stages.claims.Load() != before+1 {
		t.Fatal("the second run did not take the warm runner")
	}
	if !ahead(out) || out.ExitCode != 0 || !strings.Contains(output, "in w1") {
		t.Fatalf("same view on a warm runner: rules built ahead %v, exit %d: %q", ahead(out), out.ExitCode, output)
	}
	waitWarm(t, kind)
	out, output = runTier(t, spec(w2))
	if testPool.os.stages.claims.Load() != before+2 {
		t.Fatal("the third run did not take the warm runner")
	}
	if ahead(out) {
		t.Error("rules built for another view were used")
	}
	if out.ExitCode == 0 || strings.Contains(output, "in w1") {
		t.Errorf("a run whose view lacks the first workspace read it: exit %d: %q", out.ExitCode, output)
	}
}

// TestLandlockPrivateDirRemoved: the run's private directory (its HOME
// and TMPDIR) is gone after the run, both when the command left them
// empty (three rmdirs) and when it wrote into them (the full removal).
// Control: the command's HOME is inside the directory watched.
func TestLandlockPrivateDirRemoved(t *testing.T) {
	tiers := tiersHere(t)
	if tiers[len(tiers)-1] != BackendLandlock {
		t.Fatal("no landlock tier")
	}
	parent := sandboxtest.Dir(t)
	t.Setenv("TMPDIR", parent)
	dir := sandboxtest.Dir(t)
	for _, script := range []string{
		`echo "$HOME"`,
		`echo "$HOME"; mkdir -p "$HOME/.cache/x" && echo x > "$HOME/.cache/x/f" && echo y > "$TMPDIR/t" || exit 3`,
	} {
		out, output := runTier(t, Spec{Argv: []string{"sh", "-c", script}, Dir: dir, Writable: []string{dir}, Backend: BackendLandlock})
		if out.ExitCode != 0 {
			t.Fatalf("%s: exit %d: %s", script, out.ExitCode, output)
		}
		real, _ := filepath.EvalSymlinks(parent)
		if !strings.HasPrefix(strings.TrimSpace(output), real+"/") {
			t.Fatalf("control: the command's HOME %q is not under %s", output, real)
		}
		testPool.wait()
		if ents, err := os.ReadDir(parent); err != nil || len(ents) != 0 {
			t.Errorf("%s: left behind %v (%v)", script, ents, err)
		}
	}
}

// TestLinkToSecretInCarvedDir: a symlink among the entries of a carved
// directory (here the home, given as the workspace and a writable root,
// carved around its secrets) to a masked secret grants nothing: the
// secret can be neither read nor written through it, while a link to an
// ordinary file there still reads. Control: uncontained, the link reads
// the secret. Every tier.
func TestLinkToSecretInCarvedDir(t *testing.T) {
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			w := newWorld(t)
			secret := filepath.Join(w.home, ".ssh", "id_ed25519")
			if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(secret, []byte(w.marker), 0o600); err != nil {
				t.Fatal(err)
			}
			notes := filepath.Join(w.home, "notes.txt")
			if err := os.WriteFile(notes, []byte("plain\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			keyLink, notesLink := filepath.Join(w.home, "keylink"), filepath.Join(w.home, "noteslink")
			if err := os.Symlink(secret, keyLink); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(notes, notesLink); err != nil {
				t.Fatal(err)
			}
			if got := control(t, w.home, "cat", keyLink); !strings.Contains(got, w.marker) {
				t.Fatalf("control could not read the secret through the link: %q", got)
			}
			script := "cat " + keyLink + "; echo tampered >> " + keyLink + " && echo WROTE; cat " + notesLink
			out, output := runTier(t, Spec{Argv: []string{"sh", "-c", script}, Dir: w.home, Writable: []string{w.home}, Backend: tier})
			if strings.Contains(output, w.marker) || strings.Contains(output, "WROTE") {
				t.Errorf("the secret was reachable through a link in the workspace (exit %d):\n%s", out.ExitCode, output)
			}
			if !strings.Contains(output, "plain") {
				t.Errorf("a link to an ordinary file in the workspace did not read (exit %d):\n%s", out.ExitCode, output)
			}
			if b, _ := os.ReadFile(secret); string(b) != w.marker {
				t.Errorf("the secret was changed: %q", b)
			}
		})
	}
}
