package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// run runs argv contained under the Linux backend and returns the outcome
// and the combined output.
func run(t *testing.T, s Spec) (*Outcome, string) {
	t.Helper()
	var buf bytes.Buffer
	s.Stdout, s.Stderr = &buf, &buf
	if s.Backend == "" {
		s.Backend = BackendLinux
	}
	withView(&s)         // view_test.go
	if helperDir != "" { // the probe lies outside the read view
		s.View.Read = append(s.View.Read, helperDir)
	}
	out, err := testRunner().Run(context.Background(), &s)
	if err != nil {
		t.Fatalf("contained %q: %v", s.Argv, err)
	}
	return out, buf.String()
}

// control runs argv uncontained, with the parent's environment; it must
// succeed or the paired containment case proves nothing.
func control(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("uncontained control %q failed, so its containment case would prove nothing: %v\n%s", argv, err, out)
	}
	return string(out)
}

func requireLinuxBackend(t *testing.T) {
	t.Helper()
	if _, err := (linuxBackend{}).probe(context.Background()); err != nil {
		sandboxtest.Unavailable(t, "the Linux backend cannot run on this machine: %v", err)
	}
}

// refused asserts a contained run did not succeed. Cases that expect a
// particular cap or signal check it themselves.
func refused(t *testing.T, out *Outcome, output string) {
	t.Helper()
	if out.ExitCode == 0 {
		t.Errorf("contained run succeeded, want it refused; output:\n%s", output)
	}
}

func TestContainFilesystem(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	work := sandboxtest.Dir(t) // the writable root
	outside := sandboxtest.Dir(t)
	home, _ := os.UserHomeDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("original\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(work, "escape")); err != nil {
		t.Fatal(err)
	}
	uniq := fmt.Sprintf("ioh-sandbox-probe-%d", os.Getpid())
	type tc struct {
		name     string
		argv     []string
		cleanup  string // file the control creates
		rootOnly string // reason the control cannot succeed unprivileged
	}
	cases := []tc{
		{name: "absolute path", argv: []string{h, helperArg, "write", filepath.Join(outside, "abs.txt")}, cleanup: filepath.Join(outside, "abs.txt")},
		{name: "via symlink", argv: []string{h, helperArg, "write", filepath.Join(work, "escape", "sym.txt")}, cleanup: filepath.Join(outside, "sym.txt")},
		{name: "via hardlink", argv: []string{h, helperArg, "link", secret, filepath.Join(work, "hard.txt")}, cleanup: filepath.Join(work, "hard.txt")},
		{name: "into HOME", argv: []string{h, helperArg, "write", filepath.Join(home, uniq)}, cleanup: filepath.Join(home, uniq)},
		{name: "into /etc", argv: []string{h, helperArg, "write", filepath.Join("/etc", uniq)}, cleanup: filepath.Join("/etc", uniq), rootOnly: "only root can write /etc outside the sandbox"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, output := run(t, Spec{Argv: c.argv, Writable: []string{work}})
			refused(t, out, output)
			if c.rootOnly != "" && !sandboxtest.IsRoot() {
				t.Skipf("control skipped: %s", c.rootOnly)
			}
			control(t, work, c.argv...)
			os.Remove(c.cleanup)
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "original\n" {
		// the hardlink control appended through its link; restore
		os.WriteFile(secret, []byte("original\n"), 0o666)
	}

	t.Run("/tmp is private", func(t *testing.T) {
		p := filepath.Join("/tmp", uniq)
		out, output := run(t, Spec{Argv: []string{"sh", "-c", "echo x > " + p + " && cat " + p}, Writable: []string{work}})
		if out.ExitCode != 0 {
			t.Fatalf("writing the private /tmp failed: %s", output)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written in the sandbox appeared on the host: %v", p, err)
		}
		control(t, work, "sh", "-c", "echo x > "+p)
		os.Remove(p)
	})

	t.Run("writable root works", func(t *testing.T) {
		p := filepath.Join(work, "ok.txt")
		out, output := run(t, Spec{Argv: []string{h, helperArg, "write", p}, Writable: []string{work}})
		if out.ExitCode != 0 {
			t.Fatalf("writing the writable root failed: %s", output)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("write to the writable root did not reach the host: %v", err)
		}
	})
}

func TestContainSecrets(t *testing.T) {
	requireLinuxBackend(t)
	h := helperPath(t)
	home := sandboxtest.Dir(t)
	t.Setenv("HOME", home) // the masks follow the user's home
	for _, p := range []string{".ssh/id_ed25519", ".aws/credentials", ".netrc"} {
		full := filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(full), 0o700)
		if err := os.WriteFile(full, []byte("TOP-SECRET\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]string{
		"~/.ssh":      filepath.Join(home, ".ssh/id_ed25519"),
		"~/.aws":      filepath.Join(home, ".aws/credentials"),
		"~/.netrc":    filepath.Join(home, ".netrc"),
		"/etc/shadow": "/etc/shadow",
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			argv := []string{h, helperArg, "read", p}
			out, output := run(t, Spec{Argv: argv, Writable: []string{home}})
			if strings.Contains(output, "TOP-SECRET") || strings.Contains(output, "root:") {
				t.Errorf("secret leaked:\n%s", output)
			}
			refused(t, out, output)
			if p == "/etc/shadow" && !sandboxtest.IsRoot() {
				t.Skip("control skipped: only root can read /etc/shadow outside the sandbox")
			}
			control(t, "/", argv...)
		})
	}

	t.Run("inherited descriptors stay out", func(t *testing.T) {
		// A descriptor the caller holds without close-on-exec (say, one
		// its own parent leaked) must not reach the command.
		fd, err := unix.Open(filepath.Join(home, ".netrc"), unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		// A free number (F_DUPFD): a Dup2 onto a fixed one could replace
		// a descriptor this process holds, as the init program's (100 and up).
		leaked, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD, 200)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(leaked)
		argv := []string{"sh", "-c", "cat /proc/self/fd/" + strconv.Itoa(leaked)}
		out, output := run(t, Spec{Argv: argv})
		if strings.Contains(output, "TOP-SECRET") {
			t.Errorf("inherited descriptor leaked the secret:\n%s", output)
		}
		refused(t, out, output)
		if got := control(t, "/", argv...); !strings.Contains(got, "TOP-SECRET") {
			t.Errorf("control did not inherit the descriptor: %q", got)
		}
	})

	t.Run("API keys stay out", func(t *testing.T) {
		for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "MY_SECRET"} {
			t.Setenv(k, "sk-do-not-leak-"+k)
		}
		out, output := run(t, Spec{Argv: []string{"sh", "-c", "env; cat /proc/1/environ; cat /proc/$$/environ"}})
		if out.ExitCode != 0 || strings.Contains(output, "sk-do-not-leak") {
			t.Errorf("exit %d; output:\n%s", out.ExitCode, output)
		}
		if got := control(t, "/", "env"); !strings.Contains(got, "sk-do-not-leak") {
			t.Error("control did not see the keys")
		}
		if _, err := testRunner().Run(context.Background(), &Spec{Argv: []string{"true"}, Env: []string{"X_API_KEY=1"}}); !errors.Is(err, ErrSecretEnv) {
			t.Errorf("secret in Spec.Env: err %v, want ErrSecretEnv", err)
		}
	})
}
