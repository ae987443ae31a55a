package sandbox

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// tmpOptsFor are the mount options of a private tmpfs of the run cfg
// configures: tmpOpts with its size from tempBytes.
func tmpOptsFor(cfg *initConfig) string {
	return "mode=1777,size=" + strconv.FormatInt(tempBytes(cfg.Limits.Memory, cfg.CgroupMemory), 10)
}

// sizePrivateTmp gives the private /tmp and /dev/shm, mounted before the
// config came with defaultTempBytes each (rootfs_prepare_linux.go), the
// size of this run (tempBytes), and returns the private-tmp mechanism
// saying what holds them. root is where the private root is built.
func sizePrivateTmp(cfg *initConfig, root string) (Mechanism, error) {
	size := tempBytes(cfg.Limits.Memory, cfg.CgroupMemory)
	held := "the memory cgroup counts what is stored there"
	if !cfg.CgroupMemory {
		held = "no memory cgroup applies: what is stored there is bounded by these sizes, half of the memory cap each"
	}
	if size != defaultTempBytes {
		for _, d := range []string{"/tmp", "/dev/shm"} {
			// A remount changes only the options it names; the mount is
			// fresh and empty, so shrinking it cannot fail for lack of room.
			err := unix.Mount("", root+d, "", unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV, "size="+strconv.FormatInt(size, 10))
			if err != nil {
				return Mechanism{}, fmt.Errorf("size private %s to %d bytes: %w", d, size, err)
			}
		}
	} else if !cfg.CgroupMemory {
		held = "no memory cgroup applies: what is stored there is bounded by these sizes only"
	}
	return Mechanism{"private-tmp", StateApplied, fmt.Sprintf("tmpfs /tmp and /dev/shm of %s each (%s), HOME=%s", formatBytes(size), held, privateHome)}, nil
}
