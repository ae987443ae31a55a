package pid1

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// child runs in a re-executed test binary: "deaf" and "deaf-control"
// print the signals this process catches (SigCgt) after DeafToCommand or
// without it; "loopback" prints lo's flags before and after LoopbackUp,
// in the fresh network namespace it was started in.
func child(what string) int {
	switch what {
	case "deaf", "deaf-control":
		if what == "deaf" {
			DeafToCommand()
		}
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "SigCgt:"); ok {
				fmt.Println(strings.TrimSpace(v))
				return 0
			}
		}
		return 1
	case "loopback":
		before, err := loFlags()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		if err := LoopbackUp(); err != nil {
			fmt.Println(err)
			return 1
		}
		after, err := loFlags()
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println(before, after)
		return 0
	}
	return 2
}

func loFlags() (uint16, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return 0, err
	}
	return ifr.Uint16(), nil
}

// runChild runs this test binary as child what, with attr.
func runChild(t *testing.T, what string, attr *syscall.SysProcAttr) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+what)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestDeafToCommand: after it, the process catches none of the classic
// signals but SIGURG (the runtime's preemption), so the kernel drops
// those a command in its PID namespace sends it. Control: a Go process
// catches SIGTERM, SIGSEGV and SIGHUP by default.
func TestDeafToCommand(t *testing.T) {
	caught := func(what string) uint64 {
		out, err := runChild(t, what, nil)
		if err != nil {
			t.Fatalf("%s: %v: %s", what, err, out)
		}
		m, err := strconv.ParseUint(out, 16, 64)
		if err != nil {
			t.Fatalf("%s: SigCgt %q: %v", what, out, err)
		}
		return m
	}
	bit := func(s unix.Signal) uint64 { return 1 << (uint(s) - 1) }
	control := caught("deaf-control")
	for _, s := range []unix.Signal{unix.SIGTERM, unix.SIGSEGV, unix.SIGHUP} {
		if control&bit(s) == 0 {
			t.Fatalf("control: a Go process does not catch %v (SigCgt %x)", s, control)
		}
	}
	deaf := caught("deaf")
	classic := uint64(1)<<31 - 1 // signals 1..31
	if got := deaf & classic; got != bit(unix.SIGURG) {
		t.Fatalf("caught after DeafToCommand: %x, want only SIGURG (%x)", got, bit(unix.SIGURG))
	}
}

// TestLoopbackUp: in a fresh network namespace lo starts down (control)
// and LoopbackUp brings it up.
func TestLoopbackUp(t *testing.T) {
	attr := &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := runChild(t, "loopback", attr)
	if err != nil {
		if strings.Contains(err.Error(), "fork/exec") {
			t.Skipf("no user and network namespaces here: %v", err)
		}
		t.Fatalf("%v: %s", err, out)
	}
	var before, after uint16
	if _, err := fmt.Sscan(out, &before, &after); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	if before&unix.IFF_UP != 0 {
		t.Fatalf("control: lo is up in a fresh namespace (flags %#x)", before)
	}
	if after&unix.IFF_UP == 0 {
		t.Fatalf("lo is still down (flags %#x)", after)
	}
}

// TestLimitIPC: the four sysctls get the cap (shmall in whole pages,
// rounded up; msgmni queues of 16 KiB), each written below the first
// root that takes it; none written is an error naming each; no cap
// writes nothing.
func TestLimitIPC(t *testing.T) {
	names := []string{"shmmax", "shmall", "msgmnb", "msgmni"}
	root := func(t *testing.T) string {
		r := t.TempDir()
		if err := os.Mkdir(filepath.Join(r, "kernel"), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(r, "kernel", n), []byte("18446744073692774399"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	read := func(t *testing.T, r string) []string {
		var vs []string
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(r, "kernel", n))
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, string(b))
		}
		return vs
	}
	page := int64(os.Getpagesize())
	mem := 64<<20 + 1
	r := root(t)
	missing := filepath.Join(t.TempDir(), "missing")
	if err := LimitIPC(int64(mem), []string{missing, r}); err != nil {
		t.Fatal(err)
	}
	want := []string{strconv.Itoa(mem), strconv.FormatInt((int64(mem)+page-1)/page, 10), "16384", strconv.Itoa(mem / 16384)}
	if got := read(t, r); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("wrote %v, want %v", got, want)
	}
	if err := LimitIPC(100, []string{r}); err != nil || read(t, r)[3] != "1" {
		t.Fatalf("a cap below one queue: %v, msgmni %s, want 1", err, read(t, r)[3])
	}
	err := LimitIPC(int64(mem), []string{missing})
	for _, n := range names {
		if err == nil || !strings.Contains(err.Error(), n) {
			t.Fatalf("nothing writable: %v, want it to name %s", err, n)
		}
	}
	r = root(t)
	if err := LimitIPC(0, []string{r}); err != nil || read(t, r)[0] != "18446744073692774399" {
		t.Fatalf("no cap: %v, shmmax %s", err, read(t, r)[0])
	}
}
