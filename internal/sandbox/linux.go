//go:build linux

package sandbox

import (
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/view"

	"context"
	"fmt"
	"os/exec"

	"golang.org/x/sys/unix"
)

// linuxBackend runs the command in a re-executed child of this binary that
// sets up namespaces, a private root, Landlock and seccomp (init_linux.go,
// rootfs_linux.go).
type linuxBackend struct{}

func (linuxBackend) name() string { return BackendLinux }

func (b linuxBackend) run(ctx context.Context, s *Spec) (*Outcome, error) {
	cfg := &initConfig{
		Argv: s.Argv, Dir: s.Dir, Writable: s.Writable, Protected: s.Protected, Network: s.Network, Limits: stagecfg.Limits(s.Limits),
		Env: BuildEnv(parentEnv(), privateHome, s.Env),
	}
	if s.NetProxy != nil {
		cfg.NetProxyPort, cfg.NetProxySocket = proxyPort(s.NetProxy), s.NetProxy.Socket
	}
	// The view's masks as the policy found them, and the host's sockets.
	cfg.Masked = view.Merge(append([]string{}, s.View.Masked...), view.Existing(maskedFor(s)))
	cfg.ReadView, cfg.ViewLinks = linuxViewRoots(s.pool.caches().staticRoots(), s) // readview_cache.go
	if len(cfg.ReadView) == 0 {
		// An empty view would be read as the probe's whole host root
		// (mountRoot): refuse instead.
		return nil, fmt.Errorf("%w: the read view is empty (working directory %s is missing)", ErrSetup, cfg.Dir)
	}
	if maskHolding(cfg.Masked, cfg.Dir) != "" {
		// The command could not even enter it (workdir_explain_linux.go).
		return nil, fmt.Errorf("%w: %s", ErrSetup, workdirError(cfg, nil))
	}
	if s.Stage != nil {
		cfg.StageLower, cfg.StageUpper = s.Stage.lower, s.Stage.upper
	}
	cfg.Scratch = s.Scratch
	return b.spawn(ctx, cfg, s)
}

// spawn starts the init child in its namespaces and supervises it
// (superviseStage). A cap kills the init child; the kernel then kills
// every process of its PID namespace.
func (linuxBackend) spawn(ctx context.Context, cfg *initConfig, s *Spec) (*Outcome, error) {
	flags := linuxFlags(cfg.Network)
	return superviseStage(ctx, cfg, s, stageRun{
		backend: BackendLinux, what: "init child",
		kind: warmKind(BackendLinux, flags),
		newCmd: func() *exec.Cmd {
			cmd := initCommand(flags)
			// A stage started ahead of its run binds this run's view
			// before its own run comes, which mostly has the same view
			// (rootfs_prepare_linux.go); only a long-lived caller's, and
			// only a stage that is PID 1 itself (not the spawn stage).
			if s.pool.active() && len(cmd.Args) == 2 && cmd.Args[1] == initArg {
				withStageHint(cmd, linuxRootHint(cfg)) // stage_hint_linux.go
			}
			return cmd
		},
		stop: func(c *exec.Cmd) { _ = c.Process.Kill() },
	})
}

// linuxFlags are the namespaces of PID 1: all of them, the network one
// only without network.
func linuxFlags(network bool) uintptr {
	flags := unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP
	if !network {
		flags |= unix.CLONE_NEWNET
	}
	return uintptr(flags)
}

// maskedFor lists the masks the mechanism adds to a run's view: every
// listening pathname socket of the host, with the network on or off: neither a network
// namespace nor Landlock below ABI 9 keeps connect(2) away from one the
// view holds (a socket in the workspace or a toolchain directory). A run
// without network also loses /run, where host daemons keep theirs; with
// the network it may need /run's resolver files (/etc/resolv.conf often
// points there), which the view adds where it does.
func maskedFor(s *Spec) []string {
	socks := hostUnixSockets()
	if s.Network {
		return socks
	}
	return append([]string{"/run"}, socks...)
}

// probe spawns the full setup without running a command.
func (b linuxBackend) probe(ctx context.Context) ([]Mechanism, error) {
	cfg := &initConfig{
		Argv: []string{"true"}, Dir: "/", Probe: true,
		Masked: view.Existing([]string{"/run"}), Limits: stagecfg.Limits(probeLimits),
		Env: BuildEnv(nil, privateHome, nil),
	}
	return probeOutcome(b.spawn(ctx, cfg, &Spec{}))
}
