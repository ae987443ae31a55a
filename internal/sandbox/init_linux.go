package sandbox

import (
	"fmt"
	"os"

	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/gocache"
)

// Hidden first arguments that make this binary act as a Linux sandbox
// stage.
const (
	initArg = stagePrefix + "init" // PID 1 of the sandbox: mounts, reaps, reports
	execArg = stagePrefix + "exec" // drops privileges, restricts, execs the command
)

func candidates() []backend {
	return []backend{linuxBackend{}, landlockBackend{}, floorBackend{}}
}

func stageMain(name string) int {
	switch name {
	case initArg:
		return initMain()
	case execArg:
		return execMain()
	case floorArg:
		return floorMain()
	case spawnArg:
		return spawnMain()
	case landlockArg:
		return landlockMain()
	case gocacheArg:
		return gocache.Main(os.Args[2:]) // internal/gocache
	}
	return 2
}

// initMain is PID 1 of the sandbox. It reads its config from fd 3, builds
// the private root, starts the exec stage, reaps every process until the
// command exits, reports on fd 4, and exits, which makes the kernel kill
// whatever is left in the PID namespace.
func initMain() int {
	// Descriptors the caller inherited without close-on-exec stop here:
	// marked close-on-exec (not closed, the runtime may own some by now).
	_ = unix.CloseRange(5, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// Deaf before anything else: the command never runs before this.
	deafToCommand()
	// What no config decides is done before the config is read: a warm
	// stage has it done when its run comes. The fork thread restricts
	// itself (pid1_fork_linux.go) while this thread builds the root's
	// fixed parts (rootfs_prepare_linux.go), names the host and brings up
	// the loopback device.
	ft := startForkThread()
	exeDir()                 // before the root changes: protectBinaries (init_program_linux.go)
	prepareRoot(stageHint()) // stage_hint_linux.go
	_ = unix.Sethostname([]byte("ioh-sandbox"))
	// Only a stage with a network namespace of its own can: a stage
	// without (a run with network) is refused, and does not use it.
	loErr := loopbackUp()
	cfg, _, report, fail, err := stageStart()
	if err != nil {
		return fail(err)
	}
	if !needsExecStage(&cfg) {
		ft.joinEarly() // the fork thread joins the run's cgroups meanwhile
	}

	mechs := []Mechanism{
		{"user-namespace", StateApplied, fmt.Sprintf("uid %d mapped to 0", cfg.HostUID)},
		{"mount-namespace", StateApplied, ""},
		{"pid-namespace", StateApplied, "init dies with the run"},
		limitIPC(cfg.Limits.Memory), // init_ipc_linux.go
		{"uts-namespace", StateApplied, ""},
	}
	if cfg.Network {
		mechs = append(mechs, Mechanism{"net-namespace", StateUnavailable, "network requested"})
	} else {
		mechs = append(mechs, Mechanism{"net-namespace", StateApplied, "loopback only"})
	}
	if cfg.NetProxySocket != "" && !cfg.Network {
		// Before the root is built: the proxy's socket is a host path.
		m, err := startForwarder(&cfg, loErr) // netforward_linux.go
		if err != nil {
			return fail(err)
		}
		mechs = append(mechs, m)
	}
	fsMechs, detach, err := setupRoot(&cfg)
	if err != nil {
		return fail(err)
	}
	mechs = append(mechs, fsMechs...)
	if !cfg.Network && loErr != nil {
		mechs = append(mechs, Mechanism{"loopback", StateFailed, loErr.Error()})
	}
	return runExecStage(&cfg, mechs, report, ft, detach)
}

// deafToCommand makes PID 1 deaf to every signal the command can send
// it. The kernel delivers a signal from inside the PID namespace to its
// init only when init handles it; the Go runtime installs a handler for
// every signal at start, and one it does not pass to os/signal (SEGV,
// BUS, ABRT, ILL, FPE, TRAP, SYS, QUIT, TERM, HUP, … sent with kill)
// crashes or ends PID 1 and with it the run. So the disposition of each
// classic signal is set back to SIG_DFL: the kernel then drops it when it
// comes from inside, and the caller's SIGKILL (from the parent namespace)
// still ends the run. A real fault in PID 1 still kills it (the kernel
// forces synchronous faults on an init), without a Go stack dump. SIGURG
// keeps the runtime's handler (goroutine preemption; it ignores one sent
// by kill), and so do the real-time signals, which the runtime ignores or
// uses between its own threads. Not os/signal: Notify on every signal
// takes a round trip to the runtime's signal-mask thread per signal,
// about 4 ms of CPU per run (200 context switches), against 30 syscalls.
// SIG_DFL, not SIG_IGN, so the command, forked from PID 1, starts with
// default dispositions.
func deafToCommand() {
	var dfl [4]uint64 // struct sigaction, every field zero: SIG_DFL, no flags, empty mask
	for sig := 1; sig < 32; sig++ {
		switch unix.Signal(sig) {
		case unix.SIGKILL, unix.SIGSTOP, unix.SIGURG:
			continue
		}
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	}
}

// loopbackUp brings up lo in the new network namespace, so servers a
// command starts on 127.0.0.1 work.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}
