//go:build race

package testenv_test

// raceFlag is the go test flag this binary was built with, so a child go
// test reuses the same build.
const raceFlag = "-race"
