package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/gocache"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/pid1"
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
	pid1.DeafToCommand()
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
	loErr := pid1.LoopbackUp()
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
