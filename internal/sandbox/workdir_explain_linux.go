package sandbox

import "fmt"

// workdirError says why the command's working directory could not be
// entered inside the sandbox (err from chdir). A directory at or below a
// masked path (DefaultMasked in every home, the state directories, the
// config's sandbox.masked) stays masked even when it is a writable root
// or inside one: the mask is mounted over it last, so the run's writable
// root is the mask's empty, unreadable stand-in.
func workdirError(cfg *initConfig, err error) string {
	if m := maskHolding(cfg.Masked, cfg.Dir); m != "" {
		what := "inside the masked path " + m
		if cfg.Dir == m {
			what = "a masked path"
		}
		return fmt.Sprintf("working directory %s is %s, which stays hidden inside the sandbox even as a writable root (masked: the secrets of every home, the ioh state directories, the config's sandbox.masked); run from elsewhere", cfg.Dir, what)
	}
	return fmt.Sprintf("working directory %s cannot be entered inside the sandbox (%v); run from elsewhere or make it a writable root", cfg.Dir, err)
}

// maskHolding returns the masked path dir is or lies below, or "".
func maskHolding(masked []string, dir string) string {
	for _, m := range masked {
		if dir == m || within(dir, m) {
			return m
		}
	}
	return ""
}
