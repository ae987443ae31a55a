//go:build !linux && !darwin

package sandbox

// physicalMemory is the machine's RAM in bytes, 0 if unknown: the default
// memory cap is then 4 GiB.
func physicalMemory() int64 { return 0 }
