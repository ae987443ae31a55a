//go:build !linux

package sandbox

import "time"

// exitedCPU: only Linux exposes the clock RLIMIT_CPU is checked against;
// elsewhere the wait status's rusage is all there is.
func exitedCPU(int) time.Duration { return 0 }
