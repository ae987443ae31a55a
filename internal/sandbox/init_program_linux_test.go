package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/initprog"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

var (
	smallInitOnce sync.Once
	smallInitHash string
	smallInitErr  error
)

// smallInit builds cmd/ioh-sandbox-init as `make build` does, next to
// the copy of the test binary the containment re-runs execute, and
// returns its directory and its SHA-256, the hash a `make build` binary
// carries. A re-run (as another user, without user namespaces) copies
// its parent's build into a directory of its own: inside a user
// namespace that does not map root, the parent's root-owned file shows
// as owned by the overflow uid, which the check rightly refuses (it
// could be anyone's).
func smallInit(t *testing.T) (dir, hash string) {
	t.Helper()
	if os.Getenv(asUserEnv) != "" {
		body, err := os.ReadFile(filepath.Join(helperFiles(t), InitProgramName))
		if err != nil {
			t.Fatalf("re-run without its parent's init program: %v", err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, InitProgramName), body, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir, sha256Hex(body)
	}
	dir, hash, err := buildSmallInit()
	if err != nil {
		t.Fatalf("build the init program: %v", err)
	}
	return dir, hash
}

// buildSmallInit builds the init program into the helper directory once
// per test binary and returns the directory and the program's SHA-256.
func buildSmallInit() (dir, hash string, err error) {
	if dir, err = helperFilesErr(); err != nil {
		return "", "", err
	}
	smallInitOnce.Do(func() {
		p := filepath.Join(dir, InitProgramName)
		if smallInitErr = goBuild(p, "./cmd/ioh-sandbox-init"); smallInitErr != nil {
			return
		}
		body, err := os.ReadFile(p)
		smallInitHash, smallInitErr = sha256Hex(body), err
	})
	return dir, smallInitHash, smallInitErr
}

// useSmallInitByDefault makes the small init program, built once without
// the race detector, the stage program of every test that does not choose
// one: a stage of the race-built test binary takes ~37 ms to start, the
// init program's a few. The tests of the re-executed path, and those that
// keep the race detector on the stage code (TestTierContainment's full
// table in each tier, the pool's and warm stages' tests), call useReexec.
// A re-run of the suite (as another user, without user namespaces) keeps
// re-executing itself: there the parent's init program may rightly be
// refused, and useSmallInit copies it where a test asks for it.
func useSmallInitByDefault() error {
	if rerun() {
		return nil
	}
	dir, hash, err := buildSmallInit()
	if err != nil {
		return fmt.Errorf("build the init program: %v", err)
	}
	p := initprog.Find(dir, hash)
	if !p.Small {
		return fmt.Errorf("the init program built for the tests is refused: %s", p.Why)
	}
	stageProgram = func() *initProgram { return p }
	return nil
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// moduleRoot is this module's directory, from this file's path: a test
// binary built with go test -c may run anywhere (bench/sandbox.sh).
func moduleRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if root := filepath.Dir(filepath.Dir(filepath.Dir(file))); ok {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root
		}
	}
	return "../.."
}

// useProgram makes p this process's stage program for the test.
func useProgram(t *testing.T, p *initProgram) {
	t.Helper()
	old := stageProgram
	stageProgram = func() *initProgram { return p }
	t.Cleanup(func() { stageProgram = old })
}

// useSmallInit runs the test's sandbox stages in the small init program,
// found and checked the way a `make build` binary finds it. The one place
// it is refused is a user namespace that does not map root (the ordinary
// user's re-run inside bwrap): root's directories there show as owned by
// the overflow uid, which could be anyone's, so the binary re-executes
// itself, as the tests then check.
func useSmallInit(t *testing.T) {
	t.Helper()
	dir, hash := smallInit(t)
	p := initprog.Find(dir, hash)
	if !p.Small {
		overflow, _ := os.ReadFile("/proc/sys/kernel/overflowuid")
		if o := strings.TrimSpace(string(overflow)); o == "" || !strings.Contains(p.Why, "owned by uid "+o+",") {
			t.Fatalf("the init program built for this test is refused: %s", p.Why)
		}
		t.Logf("the init program is refused here, as it must be (%s): the stages re-execute this binary", p.Why)
		useProgram(t, p)
		return
	}
	useProgram(t, p)
	if s := initProgramSummary(); !strings.Contains(s, InitProgramName+" (the small init program") {
		t.Fatalf("sandbox doctor would say %q", s)
	}
}

// useReexec runs the test's sandbox stages in this binary, as one built
// without `make build` does, with the race detector on the stage code
// under -race (the tests' default is the small init program:
// useSmallInitByDefault).
func useReexec(t *testing.T) {
	t.Helper()
	useProgram(t, initprog.Find(t.TempDir(), ""))
}

// wantInitProgram checks which program ran the run's stages, as the stage
// itself reported it from /proc/self/exe: the small init program exactly
// when this process chose it.
func wantInitProgram(t *testing.T, out *Outcome) {
	t.Helper()
	small := stageProgram().Small
	for _, m := range out.Mechanisms {
		if m.Name != "init-program" {
			continue
		}
		if got := strings.HasPrefix(m.Detail, InitProgramName+":"); got != small {
			t.Fatalf("stages ran in %q, want the small init program: %v", m.Detail, small)
		}
		return
	}
	t.Fatalf("no init-program mechanism in %+v", out.Mechanisms)
}

// smallInitCases are the containment cases TestTierContainment also runs
// with the small init program: reads, writes, network, signals, a daemon,
// syscalls, and the caps that need the exec stage (a nested stage of the
// init program) where no cgroup carries them.
var smallInitCases = map[string]bool{
	"read ~/.ssh/id_ed25519": true, "write into HOME": true, "write into /tmp": true,
	"tcp to a host listener": true, "signal a host process": true, "daemon outlives the run": true,
	"fork bomb": true, "memory bomb": true, "syscall keyctl": true,
}

// TestInitProgramBuildIsReproducible: the init program built twice from
// the same source with `make build`'s flags is the same file, so the hash
// a binary carries names exactly the init program built with it, and a
// second `make build` relinks nothing (bench/rebuild.sh times it).
func TestInitProgramBuildIsReproducible(t *testing.T) {
	sandboxtest.SkipInShort(t, "a second build of the init program")
	_, hash := smallInit(t)
	p := filepath.Join(sandboxtest.Dir(t), InitProgramName)
	if err := goBuild(p, "./cmd/ioh-sandbox-init"); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256Hex(body); got != hash {
		t.Fatalf("two builds of the same source differ: SHA-256 %s, then %s", hash, got)
	}
}

// TestStaleInitProgramFallsBack: an init program of another build next to
// the binary is not used; the run re-executes the binary and works.
func TestStaleInitProgramFallsBack(t *testing.T) {
	dir, _ := smallInit(t)
	useProgram(t, initprog.Find(dir, sha256Hex([]byte("another build"))))
	if s := initProgramSummary(); !strings.Contains(s, "re-executes itself") || !strings.Contains(s, "another build") {
		t.Fatalf("sandbox doctor would say %q", s)
	}
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			out, output := runTier(t, Spec{Argv: []string{"sh", "-c", "echo ran"}, Dir: "/", Backend: tier})
			if out.ExitCode != 0 || !strings.Contains(output, "ran") {
				t.Fatalf("exit %d: %s", out.ExitCode, output)
			}
			wantInitProgram(t, out)
		})
	}
}

// TestStageWaitsForCgroupJoin: a stage forks the command only after the
// caller's "go" (sent once the stage is in the run's cgroups). Without
// it (the caller gave up, e.g. a failed join) the command never runs and
// the stage reports why; the control, the same stage and config with the
// "go", runs it. Both tiers, driven through the stage protocol directly.
func TestStageWaitsForCgroupJoin(t *testing.T) {
	useReexec(t)
	for _, tier := range tiersHere(t) {
		for _, confirm := range []bool{false, true} {
			name := tier + " without go"
			if confirm {
				name = tier + " with go (control)"
			}
			t.Run(name, func(t *testing.T) {
				dir := sandboxtest.Dir(t)
				mark := filepath.Join(dir, "ran")
				cfg := &initConfig{Argv: []string{"/bin/sh", "-c", ": > " + mark}, Dir: dir, Writable: []string{dir},
					Env: BuildEnv(nil, privateHome, nil), Limits: stagecfg.Limits(probeLimits)}
				var cmd *exec.Cmd
				if tier == BackendLinux {
					cfg.ReadView, cfg.ViewLinks = readViewRoots(&Spec{Dir: dir, Writable: []string{dir}, View: testView()})
					cmd = initCommand(uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWNET))
				} else {
					cfg.Tier = BackendLandlock
					cfg.ReadView, _, _ = landlockView(nil, &Spec{Dir: dir, Writable: []string{dir}, View: testView()})
					cmd = stageCommand(landlockArg)
				}
				cfgR, cfgW, _ := os.Pipe()
				stR, stW, _ := os.Pipe()
				cmd.Env = []string{}
				cmd.ExtraFiles = []*os.File{cfgR, stW}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cfgR.Close()
				stW.Close()
				if err := stagecfg.Write(cfgW, cfg); err != nil {
					t.Fatal(err)
				}
				if confirm {
					io.WriteString(cfgW, stagecfg.GoWord)
				}
				cfgW.Close()
				status, _ := io.ReadAll(stR)
				stR.Close()
				cmd.Wait()
				_, err := os.Stat(mark)
				ran := err == nil
				if confirm {
					if !ran {
						t.Fatalf("the command did not run after go:\n%s", status)
					}
					return
				}
				if ran {
					t.Fatalf("the command ran without the caller's go:\n%s", status)
				}
				if !strings.Contains(string(status), "did not confirm the run's cgroups") {
					t.Fatalf("the stage did not say why it stopped:\n%s", status)
				}
			})
		}
	}
}

// TestBinariesDirProtected: where a writable root holds the directory of
// the stages' programs (a workspace with the build's bin/, as this
// repository's own), the command cannot write there, so it cannot swap
// the init program the next run's stages execute outside every sandbox;
// the rest of the root stays writable. Control: the same write
// uncontained.
func TestBinariesDirProtected(t *testing.T) {
	h := helperPath(t)
	src, hash := smallInit(t)
	work := sandboxtest.Dir(t)
	os.Chmod(work, 0o755) // the init program is taken only from directories others cannot change
	bin := filepath.Join(work, "bin")
	body, err := os.ReadFile(filepath.Join(src, InitProgramName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "src"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, InitProgramName), body, 0o755); err != nil {
		t.Fatal(err)
	}
	p := initprog.Find(bin, hash)
	if !p.Small {
		t.Skipf("the init program is refused here (%s): its directory is not protected, as no stage runs from it", p.Why)
	}
	useProgram(t, p)
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			spec := func(argv ...string) Spec {
				return Spec{Argv: argv, Dir: work, Writable: []string{work}, View: testView(filepath.Dir(h)), Backend: tier}
			}
			swap := filepath.Join(bin, InitProgramName)
			planted := filepath.Join(bin, "planted")
			for _, target := range []string{swap, planted} {
				out, output := runTier(t, spec(h, helperArg, "write", target))
				wantInitProgram(t, out)
				if b, _ := os.ReadFile(target); string(b) == "x" {
					t.Errorf("the stages' program directory was written: %s (exit %d):\n%s", target, out.ExitCode, output)
				}
			}
			// An existing entry: the landlock tier leaves a root that holds
			// a protected directory writable in its other existing entries
			// only (docs/sandbox-tiers.md).
			other := filepath.Join(work, "src", "other.txt")
			out, output := runTier(t, spec(h, helperArg, "write", other))
			if out.ExitCode != 0 {
				t.Errorf("the rest of the writable root is not writable (exit %d):\n%s", out.ExitCode, output)
			}
			if !mechanismSays(out, "binaries-dir", bin) {
				t.Errorf("no binaries-dir mechanism names %s: %+v", bin, out.Mechanisms)
			}
			control(t, work, h, helperArg, "write", planted)
			os.Remove(planted)
		})
	}
}
