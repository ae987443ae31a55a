package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// mountRoot fills the private root (privateRoot, in the interim root).
// With a read view, the private root is a tmpfs holding read-only bind
// mounts of the view's roots and nothing else of the host (the plain one
// prepareRoot mounted, or one bound ahead from a hint); without one, the
// whole host root is bound read-only over the plain one.
func mountRoot(cfg *initConfig) (Mechanism, error) {
	if len(cfg.ReadView) == 0 {
		if err := unix.Mount(hostRoot, privateRoot, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return Mechanism{}, fmt.Errorf("bind host root: %w", err)
		}
		if err := rootfs.ReadOnlyTree(privateRoot); err != nil {
			return Mechanism{}, fmt.Errorf("make host root read-only: %w", err)
		}
		return Mechanism{"readonly-root", StateApplied, "host root bound read-only, nosuid, nodev"}, nil
	}
	// The plain private root is a tmpfs with the mount points of the
	// fresh mounts (prepareRoot); one bound ahead from a hint holds the
	// run's view already (rootfs_prepare_linux.go).
	bound, ahead := useHintedView(cfg)
	how := " (bound ahead of the run, from its hint)"
	if !ahead {
		how = ""
		var err error
		if bound, err = rootfs.BindView(hostRoot, privateRoot, cfg.ReadView, cfg.ViewLinks, cfg.Network, nil); err != nil {
			return Mechanism{}, err
		}
	}
	return Mechanism{"read-view", StateApplied, fmt.Sprintf("private root holds only %d read-only paths%s: system directories, workspace, writable roots, toolchains; every home's other contents absent", bound, how)}, nil
}

// sealRoot makes the private root's tmpfs read-only once every mount
// point on it exists.
func sealRoot(cfg *initConfig) error {
	if len(cfg.ReadView) == 0 {
		return nil
	}
	if err := unix.Mount("", privateRoot, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("seal private root: %w", err)
	}
	return nil
}
