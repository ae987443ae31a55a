package agent

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// maxInstructionBytes caps the project instructions in the prompt (the
// same cap as Codex's project_doc_max_bytes).
const maxInstructionBytes = 32 << 10

// instructionNames are the project-instruction files, by preference: a
// directory's AGENTS.md, else its CLAUDE.md, else its GEMINI.md.
var instructionNames = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// pathToken finds words of a goal that look like workspace paths
// ("stats/stats.go", "cmd/tool/main.go:12:3", "internal/").
// (compiled on first use: no regexp at package init).
var pathToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*/?`)
})

// instructionDirs are the directories whose instructions apply: the
// workspace root, then every directory between it and each file or
// directory the goal names that exists, shallower first.
func (a *agentRun) instructionDirs(goal string) []string {
	seen := map[string]bool{".": true}
	for _, d := range a.instrDirs {
		seen[d] = true
	}
	for _, tok := range pathToken().FindAllString(goal, 64) {
		tok = strings.TrimRight(tok, ".:")
		if !strings.Contains(tok, "/") && !strings.Contains(tok, ".") {
			continue
		}
		dir := a.existingDir(tok)
		for dir != "." && dir != "" && !seen[dir] {
			seen[dir] = true
			dir = path.Dir(dir)
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := strings.Count(out[i], "/"), strings.Count(out[j], "/")
		if out[i] == "." || out[j] == "." {
			return out[i] == "."
		}
		if di != dj {
			return di < dj
		}
		return out[i] < out[j]
	})
	return out
}

// existingDir is the directory of rel when rel names a file of the
// workspace, rel itself when it names a directory, "" otherwise.
func (a *agentRun) existingDir(rel string) string {
	rel = path.Clean(strings.TrimSuffix(rel, "/"))
	if rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	if _, err := a.h.opts.Root.ReadFile(rel); err == nil {
		return path.Dir(rel)
	}
	if _, err := a.cs.ListDir(rel); err == nil {
		return rel
	}
	return ""
}

// projectInstructions reads the instruction file of each directory of
// dirs (root first, deeper ones after, so a deeper file reads as the
// more specific), capped at maxInstructionBytes in all. Each is judged
// as a read_file of it would be: one the policy guards is named, not
// shown. It returns the prompt section and what the trace records.
func (a *agentRun) projectInstructions(dirs []string) (string, []event.InstructionFile) {
	var b strings.Builder
	var files []event.InstructionFile
	left := maxInstructionBytes
	for _, dir := range dirs {
		p, data, ok := a.instructionFile(dir)
		if !ok {
			continue
		}
		f := event.InstructionFile{Path: p, Bytes: len(data)}
		resolved, err := a.cs.Key(p)
		if err != nil {
			continue
		}
		switch v := a.checkRead(p, resolved); v.Effect {
		case policy.Deny:
			f.Reason = "the policy does not let the agent read it"
			fmt.Fprintf(&b, "## %s\n(not shown: the policy does not let you read it)\n", p)
		case policy.Ask:
			f.Reason = "reading it needs the user's approval"
			fmt.Fprintf(&b, "## %s\n(not shown: reading it needs the user's approval; use read_file to ask)\n", p)
		default:
			text := strings.TrimRight(string(data), "\n")
			if len(text) > left {
				text = cutAtLine(text, left)
				f.Cut = true
				text += fmt.Sprintf("\n[cut: the project instructions are capped at %d KiB; read_file %s for the rest]", maxInstructionBytes>>10, p)
			}
			left -= min(len(text), left)
			f.Shown = true
			fmt.Fprintf(&b, "## %s\n%s\n", p, text)
		}
		files = append(files, f)
	}
	return b.String(), files
}

// instructionsEvent is what run_started says of the instructions.
func (a *agentRun) instructionsEvent() *event.RunInstructions {
	if len(a.instrFiles) == 0 {
		return nil
	}
	return &event.RunInstructions{Instructions: a.instrFiles}
}

// instructionFile is dir's instruction file as the workspace has it.
func (a *agentRun) instructionFile(dir string) (string, []byte, bool) {
	for _, name := range instructionNames {
		p := path.Join(dir, name)
		if data, err := a.h.opts.Root.ReadFile(p); err == nil {
			return p, data, true
		}
	}
	return "", nil, false
}

// cutAtLine is s cut to at most n bytes, at the end of a line when one
// ends there.
func cutAtLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return s[:i]
	}
	return strings.ToValidUTF8(s, "")
}
