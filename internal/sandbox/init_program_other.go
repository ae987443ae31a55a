//go:build !linux

package sandbox

// initProgramSummary is empty where no stage re-executes a program the
// way the Linux tiers do.
func initProgramSummary() string { return "" }
