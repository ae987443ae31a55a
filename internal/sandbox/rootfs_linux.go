package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// setupRoot builds the private root and pivots into it. The host root is
// bound read-only (recursively, nosuid, nodev), or the read view's roots
// are, then come a fresh /proc, a minimal /dev, a private /tmp (made by
// prepareRoot, moved in), the writable roots, the staged overlay and the
// masks; finally the private root becomes this process's root. The old
// root is still attached below it, out of reach by path: the caller must
// call detach, and have it succeed, before it reports or starts anything
// (see rootfs.SwitchRoot).
//
// Each step makes as few system calls as it can (each costs microseconds
// in a virtual machine): mount points are created without probing first
// (rootfs.MountPoint), and the masks are bound from one sealed tmpfs, so each
// takes one bind that inherits its read-only flags.
func setupRoot(cfg *initConfig) ([]Mechanism, func() error, error) {
	var mechs []Mechanism
	prepareRoot(nil) // rootfs_prepare_linux.go; a no-op if done before the config came
	if prepared.err != nil {
		return nil, nil, prepared.err
	}
	if err := prepared.Enter(); err != nil {
		return nil, nil, err
	}
	rootMech, err := mountRoot(cfg) // readview_linux.go
	if err != nil {
		return nil, nil, err
	}
	mechs = append(mechs, rootMech)

	nr := func(p string) string { return filepath.Join(privateRoot, p) }
	for _, d := range []string{"/proc", "/dev", "/tmp"} {
		if err := movePiece(d); err != nil {
			return nil, nil, fmt.Errorf("mount %s: %w", d, err)
		}
	}
	tmpMech, err := sizePrivateTmp(cfg, privateRoot) // limits_linux.go
	if err != nil {
		return nil, nil, err
	}
	mechs = append(mechs,
		Mechanism{"proc", StateApplied, "fresh /proc of the sandbox's PID namespace"},
		Mechanism{"dev", StateApplied, "null zero full random urandom tty"},
		tmpMech)
	mechs = append(mechs, hideHostInfo(cfg)...)
	homeMech, err := placeHome(cfg, nr)
	if err != nil {
		return nil, nil, err
	}
	mechs = append(mechs, homeMech)

	for _, w := range cfg.Writable {
		if err := rootfs.BindInto(hostRoot+w, nr(w), false); err != nil {
			return nil, nil, fmt.Errorf("writable root %s: %w", w, err)
		}
		// Nothing written there may act as set-id or a device on the
		// host's later reads of it, nor inside.
		if err := rootfs.SetMountAttr(nr(w), unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
			return nil, nil, fmt.Errorf("writable root %s nosuid,nodev: %w", w, err)
		}
	}
	mechs = append(mechs, Mechanism{"writable-roots", StateApplied, strings.Join(cfg.Writable, ":") + " (nosuid, nodev)"})
	prot, err := protectDirs(cfg.Writable, cfg.Protected, nr)
	if err != nil {
		return nil, nil, err
	}
	mechs = append(mechs, prot)
	if m, err := protectBinaries(cfg.Writable, nr); err != nil || m != nil {
		if err != nil {
			return nil, nil, err
		}
		mechs = append(mechs, *m)
	}
	if hiddenByPrivateTmp(cfg) {
		// The working directory would vanish under the private /tmp: show
		// it read-only, like the rest of the host.
		if err := rootfs.BindInto(hostRoot+cfg.Dir, nr(cfg.Dir), true); err != nil {
			return nil, nil, fmt.Errorf("working directory %s: %w", cfg.Dir, err)
		}
		mechs = append(mechs, Mechanism{"workdir", StateApplied, cfg.Dir + " (under /tmp) bound read-only"})
	}
	if cfg.StageLower != "" {
		if err := mountStage(cfg, nr(cfg.StageLower)); err != nil {
			return nil, nil, err
		}
		mechs = append(mechs, Mechanism{"overlay-stage", StateApplied, cfg.StageLower + ": staged changes over the workspace, writes discarded"})
	}
	mechs = append(mechs, mountScratch(cfg, nr)...) // scratch_linux.go
	var masked []string
	for _, m := range cfg.Masked {
		if hintUsed && rootfs.MaskedAhead(nr(m), prepared.HideIDs) { // rootfs_prepare_linux.go
			masked = append(masked, m)
			continue
		}
		if err := mask(nr(m)); err != nil {
			return nil, nil, fmt.Errorf("mask %s: %w", m, err)
		}
		masked = append(masked, m)
	}
	mechs = append(mechs, Mechanism{"mask-secrets", StateApplied, fmt.Sprintf("%d paths hidden", len(masked))})

	if !needsExecStage(cfg) {
		// The fork thread's Landlock rules for what the run may write
		// (pid1_landlock_linux.go).
		write := append(append([]string{}, cfg.Writable...), cfg.Scratch...)
		if cfg.HostHome != "" {
			write = append(write, cfg.HostHome) // placeHome
		}
		if cfg.StageLower != "" {
			write = append(write, cfg.StageLower)
		}
		addRunRules(privateRoot, write, nr)
	}
	if err := sealRoot(cfg); err != nil {
		return nil, nil, err
	}
	detach, err := rootfs.SwitchRoot(privateRoot)
	if err != nil {
		return nil, nil, err
	}
	mechs = append(mechs, Mechanism{"pivot-root", StateApplied, "host root detached"})
	return mechs, detach, nil
}

// mask hides p: an empty directory over a directory, an empty file over
// anything else, both unreadable and bound from the sealed rootfs.HideSrc
// (read-only, nosuid, nodev, noexec).
func mask(p string) error { return rootfs.Mask(rootfs.HideSrc, p) }

// mountStage mounts the verification view at dst: the change directory
// over the workspace (both read-only lower layers), with a private upper
// layer on the interim tmpfs that vanishes with the run.
func mountStage(cfg *initConfig, dst string) error {
	const ovl = workDir + "/ovl"
	if err := unix.Mkdir(ovl, 0o755); err != nil {
		return fmt.Errorf("stage scratch: %w", err)
	}
	if err := unix.Mount("tmpfs", ovl, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("stage scratch: %w", err)
	}
	up, work := ovl+"/upper", ovl+"/work"
	for _, d := range []string{up, work} {
		if err := unix.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("stage: %w", err)
		}
	}
	if err := rootfs.MountPoint(dst, true); err != nil { // only creates on the private /tmp
		return fmt.Errorf("stage: %w", err)
	}
	if err := rootfs.MountOverlay(dst, hostRoot+cfg.StageUpper+":"+hostRoot+cfg.StageLower, up, work); err != nil {
		return fmt.Errorf("mount stage overlay at %s: %w", cfg.StageLower, err)
	}
	return nil
}

// hiddenByPrivateTmp reports whether the working directory lies under /tmp
// (replaced by a private tmpfs) without a writable root or the stage
// covering it.
func hiddenByPrivateTmp(cfg *initConfig) bool {
	if cfg.Dir == "" || !within(cfg.Dir, "/tmp") || cfg.Dir == "/tmp" {
		return false
	}
	for _, w := range append([]string{cfg.StageLower}, cfg.Writable...) {
		if w != "" && within(cfg.Dir, w) {
			return false
		}
	}
	return true
}

// movePiece moves the fresh mount d (/proc, /dev, /tmp, /sys) into the
// private root (rootfs.Interim.Move).
func movePiece(d string) error { return prepared.Move(d, privateRoot) }

// protectBinaries binds the directory of PID 1's binary (the init program
// or this binary, next to the caller's) read-only over itself where a
// writable root holds it, so the command cannot swap what the next run's
// stages execute (binaryDirs); nil when no writable root holds it.
func protectBinaries(writable []string, nr func(string) string) (*Mechanism, error) {
	dirs := protectedBinaryDirs([]string{exeDir()}, writable)
	for _, d := range dirs {
		if err := rootfs.SealInPlace(nr(d)); err != nil {
			return nil, fmt.Errorf("protect the binaries' directory %s: %w", d, err)
		}
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	return &Mechanism{"binaries-dir", StateApplied, "read-only inside the writable root: " + strings.Join(dirs, ":") + " (the stages' programs)"}, nil
}

// placeHome gives the command its HOME at the host's HOME path
// (cfg.HostHome), as a program on the host sees it, where the caller left
// HOME at privateHome: the private directory privateHome (on the private
// /tmp, sized and removed with it) is bound there, and the view's paths
// below the home (the workspace, toolchains) are bound again inside it.
// So a check that passes only where HOME looks like the sandbox's
// (/tmp/home) fails as it would on the host, and what the command writes
// to HOME still goes nowhere. Where it cannot (a home that is or lies in
// a writable root, or in a view path or link, or a path that is not
// plain), HOME stays privateHome and cfg.HostHome is cleared: after
// setup it is set only where HOME was placed there.
func placeHome(cfg *initConfig, nr func(string) string) (Mechanism, error) {
	home := cfg.HostHome
	cfg.HostHome = ""
	if why := homeUnplaceable(cfg, home); why != "" {
		return Mechanism{"home", StateApplied, "HOME=" + envValue(cfg.Env, "HOME") + " (" + why + ")"}, nil
	}
	if err := rootfs.MountPoint(nr(home), true); err != nil {
		return Mechanism{}, fmt.Errorf("home %s: %w", home, err)
	}
	if err := unix.Mount(nr(privateHome), nr(home), "", unix.MS_BIND, ""); err != nil {
		return Mechanism{}, fmt.Errorf("home %s: %w", home, err)
	}
	var below []string
	for _, p := range cfg.ReadView {
		if p != home && within(p, home) {
			below = append(below, p)
		}
	}
	links := map[string]string{}
	for l, t := range cfg.ViewLinks {
		if within(l, home) {
			links[l] = t
		}
	}
	if _, err := rootfs.BindView(hostRoot, privateRoot, below, links, cfg.Network, nil); err != nil {
		return Mechanism{}, fmt.Errorf("home %s: %w", home, err)
	}
	cfg.HostHome = home
	cfg.Env = append(withoutVar(cfg.Env, "HOME"), "HOME="+home) // scratch.go: libc and Go take the first of duplicates
	return Mechanism{"home", StateApplied, fmt.Sprintf("HOME=%s, the host's path: a private empty directory there (on the private /tmp), with the %d view paths below it", home, len(below))}, nil
}

// homeUnplaceable says why placeHome keeps HOME at privateHome, or "".
func homeUnplaceable(cfg *initConfig, home string) string {
	switch {
	case envValue(cfg.Env, "HOME") != privateHome:
		return "set by the caller"
	case home == "" || !filepath.IsAbs(home) || filepath.Clean(home) != home || home == "/":
		return "the host's HOME is not a plain absolute path"
	case len(cfg.ReadView) == 0:
		return "no read view: the host root is bound whole"
	case within(home, "/tmp") || within(home, "/proc") || within(home, "/dev") || within(home, "/sys"):
		return "the host's HOME lies in a directory the sandbox replaces"
	case inAny(home, cfg.Writable) || (cfg.StageLower != "" && within(home, cfg.StageLower)) || inAny(home, cfg.Scratch):
		return "the host's HOME is in a writable root"
	case inAny(home, cfg.ReadView):
		return "the host's HOME is in a read-view path"
	}
	for l := range cfg.ViewLinks {
		if within(home, l) {
			return "the host's HOME lies below a symlink"
		}
	}
	return ""
}
