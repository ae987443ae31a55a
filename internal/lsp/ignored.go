package lsp

import (
	"strconv"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"go.lsp.dev/protocol"
)

// A run that starts from a task file with settings its preparation
// ignored (config.PrepareContract: a provider an untrusted workspace may
// not choose, a check's network: true) gets a Warning `setting-ignored`
// on each such key's line, the warning (which names the fix) as its
// message. The task file's next start replaces them; editing the line
// removes its diagnostic, as for the other text diagnostics.

// ignoredKey keys a task file's ignored settings in the diagnostics.
func ignoredKey(path string) string { return "ignored:" + path }

// markIgnored publishes the warnings run id's preparation gave about the
// task file at path (none clears those of its last start).
func (s *Server) markIgnored(path, id string) {
	if path == "" {
		return
	}
	st, _ := s.runs.lookup(id)
	text := s.fileText(path)
	var entries []diagEntry
	for _, e := range st.events {
		w, ok := e.Payload.(*event.Warning)
		if !ok || e.Run != id || e.Step != 0 {
			continue
		}
		key, ok := ignoredSetting(path, w.Message)
		if !ok {
			continue
		}
		n := settingLine(text, key)
		if n == 0 {
			n = max(keyLine(text, w.Message), 1)
		}
		d := newDiag(lineRange(text, n), protocol.DiagnosticSeverityWarning, w.Message, diagData{RunID: id, Kind: kindIgnored}, codeSettingIgnored)
		entries = append(entries, diagEntry{path, d})
	}
	s.setDiags(ignoredKey(path), kindIgnored, entries)
}

// ignoredSetting is the key a warning "PATH: KEY ignored: why." names
// ("model.provider", "verify.checks[0]" of "verify.checks[0] (probe)
// network: true", "policy" of a policy rule), false for a warning about
// anything but the task file at path.
func ignoredSetting(path, msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, path+": ")
	if !ok {
		return "", false
	}
	what, _, ok := strings.Cut(rest, " ignored: ")
	if !ok {
		return "", false
	}
	f := strings.Fields(what)
	if len(f) == 0 {
		return "", false
	}
	return f[0], true
}

// settingLine is the 1-based line of a dotted key ("model.provider",
// "verify.checks[0]", "model.fallback[1].api_key_env") in a block-style
// YAML task file: the line of the deepest part found, so a flow mapping
// (`model: {provider: x}`) gives its parent's line; 0 when even the first
// part is not there.
func settingLine(text []byte, key string) int {
	lines := strings.Split(string(text), "\n")
	from, to, indent, found := 0, len(lines), -1, 0
	for _, part := range strings.Split(key, ".") {
		name, item := part, -1
		if i := strings.IndexByte(part, '['); i > 0 && strings.HasSuffix(part, "]") {
			n, err := strconv.Atoi(part[i+1 : len(part)-1])
			if err != nil {
				return found
			}
			name, item = part[:i], n
		}
		at := childKey(lines, from, to, indent, name)
		if at < 0 {
			return found
		}
		found, indent = at+1, indentOf(lines[at])
		from, to = at+1, blockEnd(lines, at+1, indent)
		if item < 0 {
			continue
		}
		at = nthItem(lines, from, to, item)
		if at < 0 {
			return found
		}
		// The item's keys sit right of its dash: the first one on the
		// dash's line too.
		dash := indentOf(lines[at])
		found, indent, from, to = at+1, dash, at, itemEnd(lines, at+1, to, dash)
		lines[at] = strings.Replace(lines[at], "-", " ", 1)
	}
	return found
}

// childKey is the index of the line in [from, to) holding key name at
// the block's own depth (the first key line's indent, deeper than
// parent), or -1.
func childKey(lines []string, from, to, parent int, name string) int {
	depth := -1
	for i := from; i < to; i++ {
		m := keyRE().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		in := indentOf(lines[i])
		if in <= parent {
			continue
		}
		if depth < 0 {
			depth = in
		}
		if in == depth && m[1] == name {
			return i
		}
	}
	return -1
}

// blockEnd is where the block under a key of indent ends: the first line
// with content at that indent or less (a sequence's dash at the key's own
// indent still belongs to it).
func blockEnd(lines []string, from, indent int) int {
	for i := from; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		in := indentOf(lines[i])
		if in < indent || (in == indent && !strings.HasPrefix(t, "-")) {
			return i
		}
	}
	return len(lines)
}

// nthItem is the index of the n-th (0-based) sequence item in [from, to),
// counting dashes at the first dash's indent, or -1.
func nthItem(lines []string, from, to, n int) int {
	depth := -1
	for i := from; i < to; i++ {
		t := strings.TrimSpace(lines[i])
		if t != "-" && !strings.HasPrefix(t, "- ") {
			continue
		}
		in := indentOf(lines[i])
		if depth < 0 {
			depth = in
		}
		if in != depth {
			continue
		}
		if n == 0 {
			return i
		}
		n--
	}
	return -1
}

// itemEnd is where a sequence item whose dash is at indent ends: the next
// line with content at that indent or less.
func itemEnd(lines []string, from, to, indent int) int {
	for i := from; i < to; i++ {
		t := strings.TrimSpace(lines[i])
		if t != "" && !strings.HasPrefix(t, "#") && indentOf(lines[i]) <= indent {
			return i
		}
	}
	return to
}

// indentOf counts a line's leading spaces.
func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }
