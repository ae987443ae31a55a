//go:build !race

package testenv_test

const raceFlag = ""
