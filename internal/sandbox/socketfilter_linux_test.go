package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/sandboxtest"
)

// TestSocketFilterDetail: the landlock tier's socket-filter mechanism
// says that AF_UNIX is refused with the network on below Landlock ABI 9,
// and that socketpair(2) still works.
func TestSocketFilterDetail(t *testing.T) {
	if d := socketFilterDetail(true, 7); !strings.Contains(d, "AF_UNIX refused, the network on or off") || !strings.Contains(d, "socketpair(2) works") {
		t.Errorf("the mechanism does not say AF_UNIX is refused with the network: %s", d)
	}
}

// TestTierNetworkOnHostSockets: with the network on, a host's pathname
// unix socket (a terminal multiplexer's in /tmp, as tmux -S
// /tmp/tmux-0/default, or one in the workspace) is unreachable in both
// tiers: the landlock tier refuses AF_UNIX sockets below Landlock ABI 9,
// the linux tier has its own /tmp and masks the host's listening sockets
// in its view. Controls: the same connections uncontained; socketpair(2)
// and TCP to a host loopback listener still work inside.
func TestTierNetworkOnHostSockets(t *testing.T) {
	h := helperPath(t)
	work := sandboxtest.Dir(t)
	tmp, err := os.MkdirTemp("/tmp", "ioh-host-sock-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o777)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	tcpAddr, _, _, inWork := echoServers(t, work) // contain_net_linux_test.go
	inTmp := filepath.Join(tmp, "default")
	ln, err := net.Listen("unix", inTmp)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(inTmp, 0o777)
	t.Cleanup(func() { ln.Close() })
	go acceptEcho(ln)
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			spec := func(argv ...string) Spec {
				return Spec{Argv: argv, Dir: work, Writable: []string{work}, View: testView(filepath.Dir(h)), Backend: tier, Network: true}
			}
			for _, sock := range []string{inTmp, inWork} {
				out, output := runTier(t, spec(h, helperArg, "unix", sock))
				if out.ExitCode == 0 {
					t.Errorf("with the network on, the host's unix socket %s was reached:\n%s", sock, output)
				}
				control(t, work, h, helperArg, "unix", sock)
			}
			out, output := runTier(t, spec("sh", "-c", h+" "+helperArg+" socketpair && "+h+" "+helperArg+" tcp "+tcpAddr))
			if out.ExitCode != 0 {
				t.Errorf("with the network on, socketpair(2) or TCP to a host loopback listener failed (exit %d):\n%s", out.ExitCode, output)
			}
			if tier == BackendLandlock && !unixSocketsConfined() && !mechanismSays(out, "socket-filter", "AF_UNIX refused") {
				t.Errorf("the landlock tier's mechanisms do not say AF_UNIX is refused: %+v", out.Mechanisms)
			}
		})
	}
}

// TestTierSysVIPC: System V IPC and POSIX message queues are not the
// host's in either tier. A host process's same-uid 0600 segment is not
// readable inside (the linux tier has its own IPC namespace, the
// landlock tier refuses the calls with ENOSYS), and a segment or a
// message queue made inside does not outlive the run. Controls: the same
// helper outside reads the segment, and its segment and queue stay.
func TestTierSysVIPC(t *testing.T) {
	h := helperPath(t)
	work := sandboxtest.Dir(t)
	marker := fmt.Sprintf("SYSV-SECRET-%d", os.Getpid())
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		t.Skipf("the kernel has no System V shared memory: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	seg, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	copy(seg, marker)
	unix.SysvShmDetach(seg)
	key := 0x10c00000 + os.Getpid()%0x100000
	exists := func() bool {
		id, err := unix.SysvShmGet(key, 0, 0)
		if err == nil {
			unix.SysvShmCtl(id, unix.IPC_RMID, nil)
			return true
		}
		if !errors.Is(err, unix.ENOENT) {
			t.Fatalf("look up segment %#x: %v", key, err)
		}
		return false
	}
	exists() // a leftover of an earlier run
	for _, tier := range tiersHere(t) {
		t.Run(tier, func(t *testing.T) {
			spec := func(argv ...string) Spec {
				return Spec{Argv: argv, Dir: work, Writable: []string{work}, View: testView(filepath.Dir(h)), Backend: tier}
			}
			read := []string{h, helperArg, "shm-read", strconv.Itoa(id)}
			out, output := runTier(t, spec(read...))
			if strings.Contains(output, marker) {
				t.Errorf("the host's 0600 segment was read inside (exit %d):\n%s", out.ExitCode, output)
			}
			if got := control(t, work, read...); !strings.Contains(got, marker) {
				t.Fatalf("uncontained control did not read the segment: %q", got)
			}
			mk := []string{h, helperArg, "shm-make", strconv.Itoa(key)}
			out, output = runTier(t, spec(mk...))
			if exists() {
				t.Errorf("a segment made inside outlived the run (exit %d):\n%s", out.ExitCode, output)
			}
			if tier == BackendLandlock && !mechanismSays(out, "seccomp", "System V IPC") {
				t.Errorf("the landlock tier's seccomp mechanism does not name System V IPC: %+v", out.Mechanisms)
			}
			if tier == BackendLinux && out.ExitCode != 0 {
				t.Errorf("SysV IPC in the linux tier's own IPC namespace failed (exit %d):\n%s", out.ExitCode, output)
			}
			control(t, work, mk...)
			if !exists() {
				t.Fatal("uncontained control's segment is not there, so the case proves nothing")
			}
			mq := fmt.Sprintf("ioh-probe-%d", os.Getpid())
			mqThere := func() bool {
				fd, err := mqOpen(mq, unix.O_RDONLY)
				if err != nil {
					return false
				}
				unix.Close(fd)
				mqUnlink(mq)
				return true
			}
			mqThere()
			out, output = runTier(t, spec(h, helperArg, "mq-make", mq))
			if mqThere() {
				t.Errorf("a POSIX message queue made inside outlived the run (exit %d):\n%s", out.ExitCode, output)
			}
			control(t, work, h, helperArg, "mq-make", mq)
			if !mqThere() {
				t.Fatal("uncontained control's message queue is not there, so the case proves nothing")
			}
		})
	}
}

// mqOpen is mq_open(3) of /name, which the kernel takes without its slash.
func mqOpen(name string, flags int) (int, error) {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return -1, err
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), uintptr(flags), 0o600, 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func mqUnlink(name string) {
	p, _ := unix.BytePtrFromString(name)
	unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
}

// TestLinuxTierIPCBounded: the linux tier's own IPC namespace holds no
// more SysV shared memory than the memory cap: a detached segment keeps
// its pages outside the address space an rlimit counts (an ordinary
// user's run), so PID 1 sets the namespace's shmall and shmmax to the
// cap. Three filled 100 MiB segments under a 256 MiB cap fail; one fits.
// Control: the three outside (removed after).
func TestLinuxTierIPCBounded(t *testing.T) {
	requireLinuxBackend(t)
	probe := helperPath(t)
	spec := func(count string) Spec {
		return Spec{Argv: []string{probe, "sysv", fmt.Sprint(100 << 20), count}, View: testView(filepath.Dir(probe)), Limits: Limits{Memory: 256 << 20}}
	}
	out, output := run(t, spec("3"))
	refused(t, out, output)
	out, output = run(t, spec("1"))
	if out.ExitCode != 0 {
		t.Errorf("one 100 MiB segment under a 256 MiB cap failed (exit %d):\n%s", out.ExitCode, output)
	}
	if !mechanismSays(out, "ipc-namespace", "at most 256 MiB") {
		t.Errorf("the ipc-namespace mechanism does not name the bound: %+v", out.Mechanisms)
	}
	ctl := exec.Command(probe, "sysv", fmt.Sprint(100<<20), "3")
	ctlOut, err := ctl.CombinedOutput()
	removeSegmentsOf(ctl.Process.Pid)
	if err != nil {
		t.Fatalf("uncontained control failed, so the case proves nothing: %v\n%s", err, ctlOut)
	}
}

// removeSegmentsOf removes the SysV segments process pid created, as
// /proc/sysvipc/shm lists them (key shmid perms size cpid ...).
func removeSegmentsOf(pid int) {
	data, _ := os.ReadFile("/proc/sysvipc/shm")
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == strconv.Itoa(pid) {
			if id, err := strconv.Atoi(f[1]); err == nil {
				unix.SysvShmCtl(id, unix.IPC_RMID, nil)
			}
		}
	}
}
