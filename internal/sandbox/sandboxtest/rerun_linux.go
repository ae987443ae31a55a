package sandboxtest

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUser is the ordinary account a suite re-runs as when root runs it.
const TestUser = "ioh-sandbox-test"

// A User is an ordinary account.
type User struct {
	Name     string
	Uid, Gid int
}

// OrdinaryUser returns TestUser, creating the account (useradd, which
// only root can run) when it is missing.
func OrdinaryUser() (*User, error) {
	u, err := user.Lookup(TestUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TestUser).CombinedOutput(); err != nil {
			return nil, errors.New("useradd: " + err.Error() + ": " + strings.TrimSpace(string(out)))
		}
		if u, err = user.Lookup(TestUser); err != nil {
			return nil, err
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &User{Name: TestUser, Uid: uid, Gid: gid}, nil
}

// Bwrap returns bubblewrap's path, which a re-run without user namespaces
// runs in; without it the test is Unavailable.
func Bwrap(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("bwrap")
	if err != nil {
		Unavailable(t, "bubblewrap is not installed: cannot take user namespaces away (CI installs it: make test)")
	}
	return p
}

// A Rerun runs tests of a test binary again in a mode this run is not:
// without user namespaces, as an ordinary user, or both.
type Rerun struct {
	Bin  string // the test binary; this one when ""
	Run  string // the -test.run pattern
	Want string // a test whose PASS line the output must show; "" checks the exit status alone
	// NoUserns runs it inside `bwrap --unshare-user --disable-userns`,
	// whose nested user-namespace limit is 0, as Ubuntu 24.04+ with its
	// AppArmor restriction, Docker's default profile and many CI runners
	// leave a process; NoUsernsEnv tells the re-run.
	NoUserns bool
	User     *User    // runs it as this ordinary user (the caller is root)
	Home     string   // HOME and the working directory (given to User); a Dir when ""
	Env      []string // more of its environment: the marks of the mode
	Timeout  time.Duration
}

// Do runs r and returns its output; it fails t unless the re-run passed.
func (r Rerun) Do(t testing.TB) string {
	t.Helper()
	bin := r.Bin
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		bin = self
	}
	if r.Home == "" {
		r.Home = Dir(t)
	}
	if r.Timeout == 0 {
		r.Timeout = 2 * time.Minute
	}
	argv := []string{bin, "-test.run", r.Run, "-test.count=1", "-test.v"}
	env, tmp := r.Env, os.TempDir()
	if r.NoUserns {
		argv = append([]string{Bwrap(t), "--unshare-user", "--disable-userns", "--dev-bind", "/", "/", "--"}, argv...)
		env = append(env, NoUsernsEnv+"=1")
	}
	attr := &syscall.SysProcAttr{}
	if r.User != nil {
		if err := os.Chown(r.Home, r.User.Uid, r.User.Gid); err != nil {
			t.Fatal(err)
		}
		attr.Credential = &syscall.Credential{Uid: uint32(r.User.Uid), Gid: uint32(r.User.Gid)}
		tmp = "/tmp" // this process's TMPDIR may be closed to the user
	}
	cmd := exec.CommandContext(Deadline(t, r.Timeout), argv[0], argv[1:]...)
	cmd.Dir = r.Home
	cmd.Env = ChildEnv(r.Home, tmp, env...)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if err != nil || (r.Want != "" && !strings.Contains(string(out), "--- PASS: "+r.Want)) {
		t.Fatalf("re-run of %s (%s) failed (%v):\n%s", r.Run, r.Mode(), err, out)
	}
	return string(out)
}

// Mode names the mode r runs in.
func (r Rerun) Mode() string {
	var m []string
	if r.NoUserns {
		m = append(m, "without user namespaces")
	}
	if r.User != nil {
		m = append(m, "as "+r.User.Name)
	}
	if len(m) == 0 {
		return "as this run"
	}
	return strings.Join(m, ", ")
}
