package sandbox

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// DefaultMasked are the secrets hidden in every run, relative to each home
// directory (a leading "~/") or absolute (SPEC §7).
var DefaultMasked = []string{
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.netrc", "~/.docker", "~/.config/gcloud",
	"~/.kube", "~/.azure", "~/.config/gh", "~/.git-credentials", "~/.npmrc",
	"~/.pypirc", "~/.config/ioh", "/etc/shadow", "/etc/gshadow", "/etc/ssh",
}

// maskTargets expands DefaultMasked over every home on the machine (the
// user's, root's and /home/*) plus extra, resolving symlinks so the real
// file is hidden too.
func maskTargets(extra []string) []string {
	homes := map[string]bool{"/root": true}
	if h, err := os.UserHomeDir(); err == nil {
		homes[h] = true
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		homes[u.HomeDir] = true
	}
	if ents, err := os.ReadDir("/home"); err == nil {
		for _, e := range ents {
			homes[filepath.Join("/home", e.Name())] = true
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		for _, q := range []string{p, resolved(p)} {
			if q != "" && !seen[q] {
				if _, err := os.Lstat(q); err == nil {
					seen[q] = true
					out = append(out, q)
				}
			}
		}
	}
	for _, m := range DefaultMasked {
		if rest, ok := strings.CutPrefix(m, "~/"); ok {
			for h := range homes {
				add(filepath.Join(h, rest))
			}
		} else {
			add(m)
		}
	}
	for _, m := range extra {
		add(m)
	}
	return out
}

func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == p {
		return ""
	}
	return r
}
