//go:build !linux

package sandbox

// cacheProgram: the floor of other systems gives the Go build cache no
// private layer (goCacheScratch reports it).
func cacheProgram() string { return "" }
