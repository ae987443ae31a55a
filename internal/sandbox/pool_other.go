//go:build !linux

package sandbox

// poolOS: only the Linux tiers keep anything ahead of a run.
type poolOS struct{}

func (*poolOS) drain(bg *pending) { bg.Wait() }
