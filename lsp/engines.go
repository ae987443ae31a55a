package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
)

// engines holds one harness per workspace folder, built on first use by
// the injected factory and rebuilt (for later runs) when the editor
// settings change. Runs in flight keep the engine they started with.
type engines struct {
	mu      sync.Mutex
	live    map[string]*Engine // by folder
	retired []*Engine
}

func newEngines() *engines { return &engines{live: map[string]*Engine{}} }

// errNoHarness is returned when the server was built without a factory.
var errNoHarness = errors.New("no agent harness configured")

// get returns the engine of folder, building it when needed.
func (s *Server) engine(ctx context.Context, folder string) (*Engine, error) {
	e := s.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	if eng, ok := e.live[folder]; ok {
		return eng, nil
	}
	if s.opts.NewHarness == nil {
		return nil, errNoHarness
	}
	s.mu.Lock()
	settings := s.settings
	s.mu.Unlock()
	eng, err := s.opts.NewHarness(ctx, Session{
		Root:           folder,
		Approver:       approver{s, folder},
		Sink:           sink{s, folder},
		EditorSettings: settings,
		Logger:         s.log,
	})
	if err != nil {
		return nil, fmt.Errorf("start agent for %s: %w", folder, err)
	}
	if eng == nil || eng.Harness == nil || eng.Root == nil {
		return nil, fmt.Errorf("start agent for %s: factory returned no harness", folder)
	}
	// Seed the overlay with the buffers already open in this folder.
	for _, doc := range s.docs.all() {
		if rel, ok := relTo(eng.Root.Dir(), doc.path); ok {
			eng.Root.SetDocument(rel, doc.text)
		}
	}
	e.live[folder] = eng
	if eng.Store != nil && eng.Store.Recovered() != nil {
		// Loudly: the user's earlier runs are in the moved file.
		msg := "ioh: " + eng.Store.Recovered().String()
		s.log.Warn(msg)
		s.showMessage(protocol.MessageTypeWarning, msg)
	}
	return eng, nil
}

// retire drops every live engine so that the next run builds a fresh one
// (new settings); the old ones close with the server.
func (e *engines) retire() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, eng := range e.live {
		e.retired = append(e.retired, eng)
		delete(e.live, k)
	}
}

func (e *engines) closeAll() {
	e.mu.Lock()
	all := e.retired
	for _, eng := range e.live {
		all = append(all, eng)
	}
	e.live, e.retired = map[string]*Engine{}, nil
	e.mu.Unlock()
	for _, eng := range all {
		if eng.Close != nil {
			eng.Close()
		}
	}
}

func (e *engines) setDocument(abs string, text []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.each(abs, func(eng *Engine, rel string) { eng.Root.SetDocument(rel, text) })
}

func (e *engines) closeDocument(abs string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.each(abs, func(eng *Engine, rel string) { eng.Root.CloseDocument(rel) })
}

// each calls f for every engine, live or retired (runs still in flight on
// a retired engine read the buffers too), whose root holds abs. The caller
// holds e.mu.
func (e *engines) each(abs string, f func(eng *Engine, rel string)) {
	for _, eng := range e.live {
		if rel, ok := relTo(eng.Root.Dir(), abs); ok {
			f(eng, rel)
		}
	}
	for _, eng := range e.retired {
		if rel, ok := relTo(eng.Root.Dir(), abs); ok {
			f(eng, rel)
		}
	}
}

// relTo returns abs relative to dir as a slash path when abs is inside it.
func relTo(dir, abs string) (string, bool) {
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// folderFor picks the workspace folder containing abs (the deepest one),
// else the first folder.
func (s *Server) folderFor(abs string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := ""
	for _, f := range s.folders {
		if _, ok := relTo(f, abs); ok && len(f) > len(best) {
			best = f
		}
	}
	if best != "" {
		return best, nil
	}
	if len(s.folders) > 0 {
		return s.folders[0], nil
	}
	return "", errors.New("no workspace folder is open")
}

// onceEngine builds a one-off engine whose editor settings carry one more
// allow rule (act on target).
func (s *Server) onceEngine(ctx context.Context, folder, act, target string) (*Engine, error) {
	if s.opts.NewHarness == nil {
		return nil, errNoHarness
	}
	s.mu.Lock()
	base := s.settings
	s.mu.Unlock()
	settings, err := withAllowRule(base, act, target)
	if err != nil {
		return nil, err
	}
	eng, err := s.opts.NewHarness(ctx, Session{Root: folder, Approver: approver{s, folder}, Sink: sink{s, folder}, EditorSettings: settings, Logger: s.log})
	if err != nil {
		return nil, fmt.Errorf("start agent for %s: %w", folder, err)
	}
	for _, doc := range s.docs.all() {
		if rel, ok := relTo(eng.Root.Dir(), doc.path); ok {
			eng.Root.SetDocument(rel, doc.text)
		}
	}
	return eng, nil
}

// withAllowRule adds {act, allow, target} to settings.policy.rules.
func withAllowRule(settings json.RawMessage, act, target string) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(settings) > 0 {
		if err := json.Unmarshal(settings, &m); err != nil {
			return nil, fmt.Errorf("editor settings: %w", err)
		}
	}
	var pol struct {
		Rules []map[string]any `json:"rules"`
	}
	if raw, ok := m["policy"]; ok {
		if err := json.Unmarshal(raw, &pol); err != nil {
			return nil, fmt.Errorf("editor settings policy: %w", err)
		}
	}
	pol.Rules = append(pol.Rules, map[string]any{"act": act, "effect": "allow", "pattern": target})
	raw, err := json.Marshal(pol)
	if err != nil {
		return nil, err
	}
	m["policy"] = raw
	return json.Marshal(m)
}
