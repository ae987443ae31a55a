//go:build !linux

package main

// The containment suite that runs the probe is Linux's only.
var actions = map[string]action{}
