package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
)

// engines holds one harness per workspace folder, built on first use by
// the injected factory and replaced (for later runs) when the editor
// settings or the folders change. A replaced engine is retired: the runs
// and requests still holding it keep it, and it is closed (its trace
// store with it) when the last of them lets go.
//
// The factory runs outside mu (it opens a SQLite store and reads
// configuration): a notification that needs mu (didChange updating the
// overlays) must not wait on it, since notifications are handled on the
// connection's read loop.
type engines struct {
	mu      sync.Mutex
	live    map[string]*Engine // by folder
	retired []*Engine          // replaced, still held
	uses    map[*Engine]int    // holds of each live or retired engine
	gen     uint64             // bumped by retire: a build begun earlier is stale
	closed  bool               // closeAll ran: no new engines
}

func newEngines() *engines {
	return &engines{live: map[string]*Engine{}, uses: map[*Engine]int{}}
}

// errNoHarness is returned when the server was built without a factory.
var errNoHarness = errors.New("no agent harness configured")

// errEnginesClosed is returned once the session has ended.
var errEnginesClosed = errors.New("the session has ended")

// maxStaleBuilds bounds how often engine rebuilds an engine whose
// settings changed while it was being built.
const maxStaleBuilds = 3

// engine returns the engine of folder, building it when needed. The
// engine is held until ctx ends (a request's context ends when its
// handler returns, a run's when the run does), so it is not closed under
// the caller even if it is retired meanwhile.
func (s *Server) engine(ctx context.Context, folder string) (*Engine, error) {
	if s.opts.NewHarness == nil {
		return nil, errNoHarness
	}
	e := s.eng
	for attempt := 1; ; attempt++ {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, errEnginesClosed
		}
		if eng, ok := e.live[folder]; ok {
			e.holdLocked(ctx, eng)
			e.mu.Unlock()
			return eng, nil
		}
		gen := e.gen
		e.mu.Unlock()

		eng, err := s.buildEngine(ctx, folder)
		if err != nil {
			return nil, err
		}

		e.mu.Lock()
		switch {
		case e.closed:
			e.mu.Unlock()
			e.close(eng)
			return nil, errEnginesClosed
		case e.live[folder] != nil:
			// Another request built it first: keep theirs.
			won := e.live[folder]
			e.holdLocked(ctx, won)
			e.mu.Unlock()
			e.close(eng)
			return won, nil
		case e.gen != gen && attempt < maxStaleBuilds:
			// Settings or folders changed while it was built.
			e.mu.Unlock()
			e.close(eng)
			continue
		}
		// Seed the overlay with the buffers open in this folder. Under mu:
		// a didChange either updated s.docs before this or reaches the
		// engine through setDocument after it.
		for _, doc := range s.docs.all() {
			if rel, ok := relTo(eng.Root.Dir(), doc.path); ok {
				eng.Root.SetDocument(rel, doc.text)
			}
		}
		if e.gen != gen {
			// Still changing: this caller uses it, later ones build anew.
			e.retired = append(e.retired, eng)
		} else {
			e.live[folder] = eng
		}
		e.holdLocked(ctx, eng)
		e.mu.Unlock()
		if rec := eng.recovered(); rec != "" {
			// Loudly: the user's earlier runs are in the moved file.
			msg := "ioh: " + rec
			s.log.Warn(msg)
			s.showMessage(protocol.MessageTypeWarning, msg)
		}
		return eng, nil
	}
}

// buildEngine runs the factory for folder with the current settings.
func (s *Server) buildEngine(ctx context.Context, folder string) (*Engine, error) {
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
		if eng != nil && eng.Close != nil {
			eng.Close()
		}
		return nil, fmt.Errorf("start agent for %s: factory returned no harness", folder)
	}
	return eng, nil
}

// holdLocked holds eng until ctx ends. The caller holds e.mu.
func (e *engines) holdLocked(ctx context.Context, eng *Engine) {
	e.uses[eng]++
	context.AfterFunc(ctx, func() { e.release(eng) })
}

// hold holds eng until the returned release is called (once).
func (e *engines) hold(eng *Engine) (release func()) {
	e.mu.Lock()
	e.uses[eng]++
	e.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { e.release(eng) }) }
}

// release lets go of one hold of eng and closes it when it was retired
// and nothing holds it any more.
func (e *engines) release(eng *Engine) {
	e.mu.Lock()
	n := e.uses[eng] - 1
	if n > 0 {
		e.uses[eng] = n
		e.mu.Unlock()
		return
	}
	delete(e.uses, eng)
	i := slices.Index(e.retired, eng)
	if i < 0 {
		e.mu.Unlock()
		return // live (or closed with the session)
	}
	e.retired = slices.Delete(e.retired, i, i+1)
	e.mu.Unlock()
	e.close(eng)
}

// retire replaces every live engine: the next use builds a fresh one (new
// settings, new folders). Those nothing holds close now, the others when
// their last run or request ends.
func (e *engines) retire() {
	e.mu.Lock()
	var idle []*Engine
	for k, eng := range e.live {
		delete(e.live, k)
		if e.uses[eng] == 0 {
			idle = append(idle, eng)
			continue
		}
		e.retired = append(e.retired, eng)
	}
	e.gen++
	e.mu.Unlock()
	for _, eng := range idle {
		e.close(eng)
	}
}

// closeAll closes every engine at the end of the session (its runs have
// ended) and refuses new ones.
func (e *engines) closeAll() {
	e.mu.Lock()
	all := e.retired
	for _, eng := range e.live {
		all = append(all, eng)
	}
	e.live, e.retired, e.uses, e.closed = map[string]*Engine{}, nil, map[*Engine]int{}, true
	e.mu.Unlock()
	for _, eng := range all {
		e.close(eng)
	}
}

// close releases eng's harness (its trace store, leases).
func (e *engines) close(eng *Engine) {
	if eng.Close != nil {
		eng.Close()
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
