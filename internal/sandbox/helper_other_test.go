//go:build !linux

package sandbox

// The probe helper drives the Linux containment suite only.
const helperArg = "__ioh_test_helper"

func helperMain([]string) int { return 2 }

func cleanupHelper() {}

// useSmallInitByDefault: the small init program is Linux's.
func useSmallInitByDefault() error { return nil }
