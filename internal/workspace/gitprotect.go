package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// hostRunDirs are protected by name in every work tree: the hook managers'
// directories (husky, a plain .githooks) that a core.hooksPath set later,
// or by a tool's install step, makes git run.
var hostRunDirs = []string{".githooks", ".husky"}

// gitHookNames are the hooks git runs; when core.hooksPath is the work
// tree's top itself, these files there are what runs.
var gitHookNames = []string{
	"applypatch-msg", "commit-msg", "fsmonitor-watchman", "post-applypatch",
	"post-checkout", "post-commit", "post-index-change", "post-merge",
	"post-receive", "post-rewrite", "post-update", "pre-applypatch",
	"pre-auto-gc", "pre-commit", "pre-merge-commit", "pre-push",
	"pre-rebase", "pre-receive", "prepare-commit-msg", "proc-receive",
	"push-to-checkout", "reference-transaction", "sendemail-validate",
	"update",
}

// Bounds of one HostRunPaths call: include chains deeper than git's own
// limit (10) or more configuration files than this are an error.
const (
	maxGitIncludeDepth = 10
	maxGitConfigFiles  = 64
	maxGitConfigBytes  = 1 << 20
)

// HostRunPaths returns the paths inside the work tree root whose content
// the host's git runs or reads as configuration later (git status, git
// commit), as slash paths relative to root, sorted: .husky and .githooks
// by name; from git's configuration for root (system, global, the
// repository's config and config.worktree, and every file they include
// through include.path or includeIf.*.path, whatever the condition,
// followed recursively), each included file inside root, the
// core.hooksPath directory (relative to root, as git takes it), the
// core.attributesFile and core.excludesFile targets, and every path
// inside root named by a key whose value git runs as a command
// (core.fsmonitor, core.sshCommand, core.editor, core.pager,
// core.askPass, filter.*.clean/smudge/process, diff.*.textconv,
// merge.*.driver, credential.helper, gpg.program, alias.*, …). A
// command's words are counted when they hold a slash or name a file that
// exists in root. The .git directory itself is not listed (callers
// protect it by name). Paths may not exist yet.
//
// The error reports a configuration file that exists but cannot be read,
// is larger than 1 MiB, or an include chain deeper than 10 files or wider
// than 64: git would stop too, and the paths found so far (returned with
// it) are incomplete.
func HostRunPaths(root string) ([]string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	g := &gitRunScan{root: root, home: os.Getenv("HOME"), found: map[string]bool{}}
	for _, d := range hostRunDirs {
		g.found[d] = true
	}
	gitDir, common := gitDirs(root)
	files := gitConfigFiles(common)
	files = append(files, filepath.Join(gitDir, "config.worktree"))
	for _, f := range files {
		if g.err == nil {
			g.read(f, 0)
		}
	}
	out := make([]string, 0, len(g.found))
	for p := range g.found {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, g.err
}

// gitRunScan collects HostRunPaths' paths over configuration files.
type gitRunScan struct {
	root, home string
	found      map[string]bool
	files      int
	err        error
}

// read scans the configuration file name (included at depth).
func (g *gitRunScan) read(name string, depth int) {
	if depth > maxGitIncludeDepth {
		g.err = fmt.Errorf("git configuration %s: includes nested deeper than %d files", name, maxGitIncludeDepth)
		return
	}
	if g.files++; g.files > maxGitConfigFiles {
		g.err = fmt.Errorf("git configuration %s: more than %d configuration files included", name, maxGitConfigFiles)
		return
	}
	data, err := readGitConfigFile(name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			g.err = fmt.Errorf("git configuration: %w", err)
		}
		return
	}
	gitConfigEntries(data, func(section, sub, key, value string) bool {
		g.entry(name, depth, section, sub, key, value)
		return g.err == nil
	})
}

// entry takes one key of the file name.
func (g *gitRunScan) entry(name string, depth int, section, sub, key, value string) {
	if value == "" {
		return // a boolean key, or an empty value: no path
	}
	switch {
	case key == "path" && (section == "include" || section == "includeif"):
		inc := expandHome(value, g.home)
		if !filepath.IsAbs(inc) {
			inc = filepath.Join(filepath.Dir(name), inc)
		}
		g.add(inc)
		g.read(inc, depth+1)
	case section == "core" && sub == "" && key == "hookspath":
		g.hooksDir(value)
	case section == "core" && sub == "" && (key == "attributesfile" || key == "excludesfile"):
		g.add(g.fromRoot(expandHome(value, g.home)))
	case runsCommand(section, sub, key):
		g.addFile(g.fromRoot(expandHome(value, g.home))) // a path with spaces
		for _, w := range strings.Fields(value) {
			w = strings.Trim(w, `"'`)
			if w == "" || w[0] == '-' || w[0] == '!' && len(w) == 1 {
				continue
			}
			w = strings.TrimPrefix(w, "!")
			p := g.fromRoot(expandHome(w, g.home))
			if strings.Contains(w, "/") {
				g.add(p)
			} else {
				g.addFile(p)
			}
		}
	}
}

// hooksDir takes core.hooksPath: a relative value is relative to the
// work tree's top. The top itself means the hook files there.
func (g *gitRunScan) hooksDir(value string) {
	p := g.fromRoot(expandHome(value, g.home))
	if filepath.Clean(p) == g.root {
		for _, h := range gitHookNames {
			g.add(filepath.Join(g.root, h))
		}
		return
	}
	g.add(p)
}

// fromRoot makes a configuration path absolute the way git does for the
// work tree's commands: relative to the top of the work tree.
func (g *gitRunScan) fromRoot(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(g.root, p)
}

// add records the absolute path p when it lies inside the root (not the
// root itself).
func (g *gitRunScan) add(p string) {
	rel, err := filepath.Rel(g.root, filepath.Clean(p))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return
	}
	g.found[path.Clean(filepath.ToSlash(rel))] = true
}

// addFile records p when it is an existing regular file inside the root.
func (g *gitRunScan) addFile(p string) {
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		g.add(p)
	}
}

// runsCommand reports whether git runs the value of section.sub.key (names
// lowercased) as a command.
func runsCommand(section, sub, key string) bool {
	switch section {
	case "alias", "pager":
		return true
	case "core":
		switch key {
		case "fsmonitor", "sshcommand", "editor", "pager", "askpass", "gitproxy":
			return true
		}
	case "filter":
		return key == "clean" || key == "smudge" || key == "process"
	case "diff":
		return key == "textconv" || key == "command" || key == "external"
	case "merge":
		return key == "driver"
	case "difftool", "mergetool", "browser", "man":
		return key == "cmd" || key == "path"
	case "credential":
		return key == "helper"
	case "gpg":
		return key == "program"
	case "sequence":
		return key == "editor"
	case "interactive":
		return key == "difffilter"
	case "uploadpack":
		return key == "packobjectshook"
	case "web":
		return key == "browser"
	case "sendemail":
		return key == "validatehook" || key == "sendmailcmd" || key == "smtpserver"
	}
	return false
}

// gitDirs returns the git directory of the work tree root (root/.git, or
// where a .git file's "gitdir:" points) and its common directory.
func gitDirs(root string) (gitDir, common string) {
	common = gitCommonDir(root)
	gitDir = filepath.Join(root, ".git")
	data, err := os.ReadFile(gitDir)
	if err != nil {
		return gitDir, common
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:"); ok {
		gd = strings.TrimSpace(gd)
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(root, gd)
		}
		return filepath.Clean(gd), common
	}
	return gitDir, common
}

// readGitConfigFile reads a configuration file of at most 1 MiB.
func readGitConfigFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxGitConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxGitConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxGitConfigBytes)
	}
	return data, nil
}

// gitConfigEntries calls visit for each key of the git configuration text
// data, in order, with the section and key lowercased and the subsection
// as written ("" for none; the old [section.sub] form lowercased), and the
// value decoded by configString; a boolean key (no "=") is skipped.
// visit returning false stops the scan. A malformed section header ends
// it, as git would refuse the file.
func gitConfigEntries(data []byte, visit func(section, sub, key, value string) bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxGitConfigBytes)
	section, sub, pending := "", "", ""
	for sc.Scan() {
		line := pending + sc.Text()
		pending = ""
		if strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) {
			pending = line[:len(line)-1]
			continue
		}
		t := strings.TrimSpace(line)
		if t != "" && t[0] == '[' {
			var ok bool
			section, sub, t, ok = gitSectionHeader(t)
			if !ok {
				return
			}
		}
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		k, v, hasValue := strings.Cut(t, "=")
		if !hasValue {
			continue // a boolean key: no value, no path
		}
		if !visit(section, sub, strings.ToLower(strings.TrimSpace(k)), configString(v)) {
			return
		}
	}
}

// gitSectionHeader parses the header at the start of t ("[core]",
// `[remote "origin"]`, "[branch.main]") and returns the rest of the line.
func gitSectionHeader(t string) (section, sub, rest string, ok bool) {
	name, q, hasSub := strings.Cut(t[1:], `"`)
	if !hasSub {
		end := strings.IndexByte(t, ']')
		if end < 0 {
			return "", "", "", false
		}
		name = strings.ToLower(strings.TrimSpace(t[1:end]))
		section, sub, _ = strings.Cut(name, ".")
		return section, sub, strings.TrimSpace(t[end+1:]), true
	}
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\\' && i+1 < len(q):
			i++
			b.WriteByte(q[i])
		case c == '"':
			after := strings.TrimLeft(q[i+1:], " \t")
			if !strings.HasPrefix(after, "]") {
				return "", "", "", false
			}
			return strings.ToLower(strings.TrimSpace(name)), b.String(), strings.TrimSpace(after[1:]), true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", "", false
}
