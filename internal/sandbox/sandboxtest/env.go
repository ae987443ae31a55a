package sandboxtest

import "os"

// quietRace is the race runtime's setting that ends a race-built process
// at once: by default it sleeps a second at exit (atexit_sleep_ms=1000),
// and the tests start race-built test binaries many times (as a helper,
// as the sandbox's re-executed stages, as a re-run of a suite).
const quietRace = "atexit_sleep_ms=0"

// QuietRace sets GORACE so that this process's children do not sleep at
// exit, unless GORACE is set already (a developer's own options win).
// testenv.Main calls it for every test binary; the sandbox passes GORACE
// on to its stages and to contained commands.
func QuietRace() {
	if _, ok := os.LookupEnv("GORACE"); !ok {
		os.Setenv("GORACE", quietRace)
	}
}

// ChildEnv is the whole environment of a re-run of a test binary started
// with a fresh one: HOME, the PATH and CI of this process, TMPDIR, the race
// runtime's options (QuietRace's when this process has none), and more.
// The re-run's TestMain (testenv.Main) gives it the rest of its world.
func ChildEnv(home, tmp string, more ...string) []string {
	race, ok := os.LookupEnv("GORACE")
	if !ok {
		race = quietRace
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "CI=" + os.Getenv("CI"), "GORACE=" + race}
	return append(env, more...)
}
