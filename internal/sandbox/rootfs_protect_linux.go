package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/rootfs"
)

// tmpOpts are the mount options of the private /tmp and /dev/shm.
var tmpOpts = "mode=1777,size=" + strconv.Itoa(defaultTempBytes)

// sysfsMasked are the parts of /sys that describe the host machine (ACPI
// and DMI tables, serial numbers, EFI variables) and that no build needs.
var sysfsMasked = []string{"/sys/firmware", "/sys/devices/virtual/dmi", "/sys/class/dmi", "/sys/kernel/security", "/sys/kernel/debug"}

// protectedIn lists what must stay read-only in the writable root w
// (unless it is itself a writable root): the .git of every submodule w's .gitmodules names (a
// rewritten "gitdir:" would make the host's next git status recurse into
// a repository the command controls), and the extra paths that lie in w
// (Spec.Protected: the view's protected names in every writable root, the
// hooks directory and included files of w's git configuration). read
// reads a host file.
func protectedIn(w string, writable, extra []string, read func(string) ([]byte, error)) []string {
	var out []string
	add := func(p string) {
		if !contains(writable, p) && !contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range extra {
		if p != w && within(p, w) {
			add(p)
		}
	}
	data, err := read(filepath.Join(w, ".gitmodules"))
	if err != nil || len(data) > 1<<20 {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "path" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		p := filepath.Join(w, v)
		if v == "" || p == w || !within(p, w) {
			continue
		}
		add(filepath.Join(p, ".git"))
	}
	return out
}

// protectDirs makes what protectedIn lists for each writable root
// (extra: Spec.Protected; directories or files: a worktree's or
// submodule's .git is a file) read-only (rootfs.Protect). nr maps a host
// path to its place in the new root; the host tree is still at hostRoot.
func protectDirs(writable, extra []string, nr func(string) string) (Mechanism, error) {
	readHost := func(p string) ([]byte, error) { return readSmall(hostRoot + p) }
	var paths []string
	for _, w := range writable {
		paths = append(paths, protectedIn(w, writable, extra, readHost)...)
	}
	done, absent, err := rootfs.Protect(hostRoot, nr, writable, paths)
	if err != nil {
		return Mechanism{}, err
	}
	detail := "read-only: " + strings.Join(done, ":")
	if len(done) == 0 {
		detail = "none present"
	}
	if absent > 0 {
		detail += fmt.Sprintf("; %d absent, removed after the run if the command creates them", absent)
	}
	return Mechanism{"protected-dirs", StateApplied, detail}, nil
}

// readSmall reads a regular file of at most 1 MiB.
func readSmall(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil, fmt.Errorf("%s: not a small regular file", p)
	}
	return os.ReadFile(p)
}

// absentProtected lists what protectedIn lists that does not exist (seen
// from the sandbox's own root, before the command starts), for the sweep
// after the run.
func absentProtected(writable, extra []string) []string {
	var out []string
	for _, w := range writable {
		for _, p := range protectedIn(w, writable, extra, readSmall) {
			if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
				out = append(out, p)
			}
		}
	}
	return out
}

// sweepProtected removes the protected directories the command created
// where none existed (git init, a new .vscode/tasks.json): they would run
// code on the host. Every process of the sandbox is dead by now.
func sweepProtected(absent []string) *Mechanism {
	var removed []string
	for _, p := range absent {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return &Mechanism{"protected-dirs-sweep", StateFailed, fmt.Sprintf("remove %s: %v", p, err)}
		}
		removed = append(removed, p)
	}
	if len(removed) == 0 {
		return nil
	}
	return &Mechanism{"protected-dirs-sweep", StateApplied, "removed what the command created: " + strings.Join(removed, ":")}
}

func inAny(p string, roots []string) bool {
	for _, r := range roots {
		if within(p, r) {
			return true
		}
	}
	return false
}

// hideHostInfo keeps the host's identity out of the sandbox: without
// network, a fresh sysfs of the sandbox's own network namespace (only lo
// under /sys/class/net, no host NIC names or MACs; prepareRoot mounted it
// and masked it, this moves it in); in every case the firmware and DMI
// tables masked and a boot id of the run's own (bound by prepareRoot).
func hideHostInfo(cfg *initConfig) []Mechanism {
	var notes, failed []string
	fresh := false
	if _, err := os.Stat(privateRoot + "/sys"); err != nil {
		// Not in this root's view at all: nothing of the host to hide.
	} else if !cfg.Network {
		err := prepared.SysErr
		if err == nil {
			err = movePiece("/sys") // rootfs_linux.go
		}
		if err != nil {
			failed = append(failed, "fresh sysfs: "+err.Error())
		} else {
			fresh = true
			notes = append(notes, "fresh sysfs of the sandbox's network namespace")
			failed = append(failed, prepared.SysFailed...)
		}
	}
	if !fresh {
		// The host's sysfs (network on), or what the view binds of it.
		for _, p := range sysfsMasked {
			if err := mask(privateRoot + p); err != nil {
				failed = append(failed, p+": "+err.Error())
			}
		}
	}
	notes = append(notes, "firmware and DMI tables masked")
	if prepared.BootErr != nil {
		failed = append(failed, "boot id: "+prepared.BootErr.Error())
	} else {
		notes = append(notes, "own boot id")
	}
	if len(failed) > 0 {
		return []Mechanism{{"host-info", StateFailed, strings.Join(failed, "; ")}}
	}
	return []Mechanism{{"host-info", StateApplied, strings.Join(notes, ", ")}}
}
