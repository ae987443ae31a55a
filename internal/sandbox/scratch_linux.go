package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// scratchBase is where, on the interim root, the scratch layers' upper and
// work directories live (one private tmpfs for all of them).
const scratchBase = workDir + "/scratch"

// mountScratch layers each of cfg.Scratch in the private root: an overlay
// whose lower layer is the host directory (never written) and whose upper
// layer lives on a private tmpfs that vanishes with the run. It must run
// on the interim root, while the host is still at hostRoot and the new
// root is being built (nr names a path in it). A directory that cannot be layered stays as the read
// view shows it, read-only, and leaves cfg.Scratch, so only layered ones
// are granted writes by Landlock. The kernel needs overlayfs in user
// namespaces (Linux 5.11).
func mountScratch(cfg *initConfig, nr func(string) string) []Mechanism {
	if len(cfg.Scratch) == 0 {
		return nil
	}
	var layered, failed []string
	base := func() error {
		if err := os.Mkdir(scratchBase, 0o755); err != nil {
			return err
		}
		return unix.Mount("tmpfs", scratchBase, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpOptsFor(cfg))
	}()
	for i, dir := range cfg.Scratch {
		err := base
		if err == nil {
			err = layerScratch(dir, nr(dir), filepath.Join(scratchBase, fmt.Sprint(i)))
		}
		if err != nil {
			failed = append(failed, dir+": "+err.Error())
			continue
		}
		layered = append(layered, dir)
	}
	cfg.Scratch = layered
	var mechs []Mechanism
	if len(layered) > 0 {
		mechs = append(mechs, Mechanism{"overlay-scratch", StateApplied, strings.Join(layered, ":") + ": host content read, writes to a private layer discarded with the run"})
	}
	if len(failed) > 0 {
		mechs = append(mechs, Mechanism{"overlay-scratch", StateFailed, strings.Join(failed, "; ") + " (left read-only)"})
	}
	return mechs
}

// layerScratch mounts the overlay of host directory dir at dst, with its
// upper and work directories under priv.
func layerScratch(dir, dst, priv string) error {
	if fi, err := os.Stat(dst); err != nil {
		return fmt.Errorf("not in the read view: %w", err)
	} else if !fi.IsDir() {
		return errors.New("not a directory")
	}
	up, work := filepath.Join(priv, "upper"), filepath.Join(priv, "work")
	for _, d := range []string{priv, up, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := rootfs.MountOverlay(dst, hostRoot+dir, up, work); err != nil {
		return fmt.Errorf("mount overlay: %w", err)
	}
	return nil
}

// cacheProgram is the file the go command inside a landlock or floor run
// starts as its GOCACHEPROG (goCacheScratch): the small init program when
// this process's stages run in it, else this binary; "" if neither can be
// named. It runs inside the sandbox, with the command's restrictions.
func cacheProgram() string {
	if p := stageProgram(); p.Small && p.File != nil {
		return p.File.Name()
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return ""
	}
	return exe
}
