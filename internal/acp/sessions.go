package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"
)

// record is a session as kept under the state directory (outside every
// workspace): its workspace, its title and its runs in order. The runs'
// contents live in the workspace's trace store; this is only the index
// that groups them into a conversation. The client's MCP servers stay in
// memory (their env and headers carry credentials, and nothing under the
// state directory may hold a secret); only their names are written, and
// session/load brings the servers again.
type record struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	Title      string            `json:"title,omitempty"`
	MCPServers []json.RawMessage `json:"-"`
	MCPNames   []string          `json:"mcpServerNames,omitempty"`
	Runs       []string          `json:"runs"`
	// Mode is the approval mode (session/set_mode) and Model the model
	// choice (ModelChoice.ID, "" for the configuration's) the session
	// was left in.
	Mode    string    `json:"mode,omitempty"`
	Model   string    `json:"model,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// sessionIDPattern: ids we hand out ("s-" + hex) and run ids ("r-" + hex)
// for a run started elsewhere (CLI, language server) loaded as a session.
// It compiles on first use, not in package init (a counted repetition
// compiles to one instruction per count; internal/archtest guards this).
var sessionIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[sr]-[0-9a-f]{8,64}$`) })

// index stores records one JSON file each, written whole (temporary file
// and rename), so a crash leaves the old record or the new one.
type index struct {
	dir    string // "" keeps records in memory only
	redact func(string) string
	mu     sync.Mutex
	mem    map[string]*record
}

// newIndex keeps records under dir; redact removes configured secrets
// from what is written (a title is the first line of a goal the user
// typed).
func newIndex(dir string, redact func(string) string) *index {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &index{dir: dir, redact: redact, mem: map[string]*record{}}
}

func (x *index) path(id string) string { return filepath.Join(x.dir, id+".json") }

func (x *index) put(r *record) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	cp := *r
	cp.Runs = append([]string(nil), r.Runs...)
	cp.Title = x.redact(cp.Title)
	cp.MCPNames = mcpNames(cp.MCPServers)
	x.mem[r.SessionID] = &cp
	if x.dir == "" {
		return nil
	}
	if err := os.MkdirAll(x.dir, 0o700); err != nil {
		return fmt.Errorf("create session index %s: %w", x.dir, err)
	}
	b, err := json.MarshalIndent(&cp, "", "  ")
	if err != nil {
		return fmt.Errorf("encode session %s: %w", r.SessionID, err)
	}
	tmp, err := os.CreateTemp(x.dir, r.SessionID+".*.tmp")
	if err != nil {
		return fmt.Errorf("write session %s: %w", r.SessionID, err)
	}
	_, werr := tmp.Write(b)
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), x.path(r.SessionID))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write session %s: %w", r.SessionID, werr)
	}
	return nil
}

// errNoSession: no record of that id.
var errNoSession = errors.New("no such session")

func (x *index) get(id string) (*record, error) {
	if !sessionIDPattern().MatchString(id) {
		return nil, fmt.Errorf("session %q: %w", id, errNoSession)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, ok := x.mem[id]; ok {
		cp := *r
		return &cp, nil
	}
	if x.dir == "" {
		return nil, fmt.Errorf("session %s: %w", id, errNoSession)
	}
	b, err := os.ReadFile(x.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("session %s: %w", id, errNoSession)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, err)
	}
	return &r, nil
}

// list returns every record, newest first; cwd, when set, keeps those
// of that workspace. Unreadable files are skipped.
func (x *index) list(cwd string) ([]*record, error) {
	seen := map[string]*record{}
	if x.dir != "" {
		ents, err := os.ReadDir(x.dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		for _, e := range ents {
			name := e.Name()
			if filepath.Ext(name) != ".json" {
				continue
			}
			if r, err := x.get(name[:len(name)-len(".json")]); err == nil {
				seen[r.SessionID] = r
			}
		}
	}
	x.mu.Lock()
	for id, r := range x.mem {
		cp := *r
		seen[id] = &cp
	}
	x.mu.Unlock()
	var out []*record
	for _, r := range seen {
		if cwd == "" || filepath.Clean(cwd) == filepath.Clean(r.CWD) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].SessionID < out[j].SessionID
	})
	return out, nil
}

// mcpNames are the names of the client's MCP servers.
func mcpNames(servers []json.RawMessage) []string {
	var out []string
	for _, raw := range servers {
		var m struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &m) == nil {
			out = append(out, m.Name)
		}
	}
	return out
}
