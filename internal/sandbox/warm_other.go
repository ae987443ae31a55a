//go:build !linux

package sandbox

// setWarm: only the Linux tiers start their stages ahead (warm_linux.go).
func setWarm(bool) {}
