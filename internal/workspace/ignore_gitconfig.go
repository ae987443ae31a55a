package workspace

import (
	"os"
	"path/filepath"
	"strings"
)

// repoExcludes returns the repository-wide ignore rules of the repository
// whose work tree is dir, highest precedence first: $GIT_DIR/info/exclude,
// then the user's global excludes file (core.excludesFile from git's
// configuration, else $XDG_CONFIG_HOME/git/ignore, else
// ~/.config/git/ignore). Both are relative to the work tree's top.
func repoExcludes(dir string) []*ruleSet {
	common := gitCommonDir(dir)
	var out []*ruleSet
	if s := readIgnoreAt(dir, filepath.Join(common, "info", "exclude")); s != nil {
		out = append(out, s)
	}
	if f := globalExcludesFile(common); f != "" {
		if s := readIgnoreAt(dir, f); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// gitCommonDir is the repository directory of the work tree dir: dir/.git,
// or for a linked work tree or submodule (.git is a file holding "gitdir:
// PATH") that directory's common directory.
func gitCommonDir(dir string) string {
	dotGit := filepath.Join(dir, ".git")
	fi, err := os.Stat(dotGit)
	if err != nil || fi.IsDir() {
		return dotGit
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return dotGit
	}
	line, _, _ := strings.Cut(string(data), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return dotGit
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		return filepath.Clean(cd)
	}
	return gd
}

// gitConfigFiles lists the git configuration files that apply to the
// repository at common, in the order git reads them (later values win):
// system (unless GIT_CONFIG_NOSYSTEM), global (XDG, then ~/.gitconfig, or
// $GIT_CONFIG_GLOBAL), then the repository's own.
func gitConfigFiles(common string) []string {
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	var files []string
	if !gitEnvTrue(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
		if f := os.Getenv("GIT_CONFIG_SYSTEM"); f != "" {
			files = append(files, f)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		if g != "" {
			files = append(files, g)
		}
	} else {
		switch {
		case xdg != "":
			files = append(files, filepath.Join(xdg, "git", "config"))
		case home != "":
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	return append(files, filepath.Join(common, "config"))
}

// globalExcludesFile is the path of the user's global excludes file as git
// would find it for the repository at common: the last core.excludesFile
// in its configuration files, with "~/" expanded; without one,
// $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore. "" when there is
// none.
func globalExcludesFile(common string) string {
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	value, set := "", false
	for _, f := range gitConfigFiles(common) {
		if v, ok := configValue(f, "core", "excludesfile", home, 0); ok {
			value, set = v, true
		}
	}
	if set {
		return expandHome(value, home)
	}
	switch {
	case xdg != "":
		return filepath.Join(xdg, "git", "ignore")
	case home != "":
		return filepath.Join(home, ".config", "git", "ignore")
	}
	return ""
}

func gitEnvTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// expandHome expands a leading "~/" (git's path interpolation).
func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

// configValue returns the last value of section.key (no subsection; names
// case-insensitive) in the git configuration file path, following
// [include] path entries. Unreadable files and malformed lines count as
// absent, as they would make git itself fail rather than choose a value.
func configValue(path, section, key, home string, depth int) (string, bool) {
	if depth > 10 {
		return "", false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	value, found := "", false
	gitConfigEntries(data, func(sec, sub, k, v string) bool { // gitprotect.go
		switch {
		case sub != "":
		case sec == section && k == key:
			value, found = v, true
		case sec == "include" && k == "path":
			inc := expandHome(v, home)
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			if iv, ok := configValue(inc, section, key, home, depth+1); ok {
				value, found = iv, true
			}
		}
		return true
	})
	return value, found
}

// configString decodes a git configuration value: surrounding whitespace
// dropped, double quotes removed, \" \\ \n \t \b escapes, and a "#" or ";"
// outside quotes starting a comment.
func configString(v string) string {
	var b strings.Builder
	quoted := false
	v = strings.TrimSpace(v)
	spaces := 0 // unquoted trailing whitespace, dropped at the end
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
			spaces = 0
			continue
		case !quoted && (c == '#' || c == ';'):
			i = len(v)
			continue
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			default:
				c = v[i]
			}
			spaces = 0
		case !quoted && (c == ' ' || c == '\t'):
			spaces++
		default:
			spaces = 0
		}
		b.WriteByte(c)
	}
	s := b.String()
	return s[:len(s)-spaces]
}
