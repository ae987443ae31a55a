package workspace

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// RescanAll is reported alone in a batch when the watcher lost events (the
// kernel queue overflowed): every file may have changed.
const RescanAll = "."

// Watcher reports external changes under a Root: recursive, honouring the
// ignore rules, debounced into batches of relative paths.
type Watcher struct {
	root     *Root
	fw       *fsnotify.Watcher
	debounce time.Duration
	events   chan []string
	done     chan struct{}
	ended    chan struct{}
	once     sync.Once

	mu     sync.Mutex
	levels map[string]*ignoreLevel // watched directory → its ignore level
}

// NewWatcher starts watching every non-ignored directory under r. Batches
// are sent on Events at most once per debounce interval of quiet; Close
// stops the watcher and closes Events.
func NewWatcher(r *Root, debounce time.Duration) (*Watcher, error) {
	if debounce <= 0 {
		debounce = 100 * time.Millisecond
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", r.Dir(), err)
	}
	w := &Watcher{root: r, fw: fw, debounce: debounce, events: make(chan []string),
		done: make(chan struct{}), ended: make(chan struct{}), levels: map[string]*ignoreLevel{}}
	if _, err := w.addTree(r.Dir(), ancestorLevels(r.Dir(), r.Dir())); err != nil {
		fw.Close()
		return nil, fmt.Errorf("watch %s: %w", r.Dir(), err)
	}
	go w.loop() // ends when Close closes done and the fsnotify watcher
	return w, nil
}

// Events delivers batches of changed root-relative paths, sorted.
func (w *Watcher) Events() <-chan []string { return w.events }

// Close stops the watcher; its goroutine has ended when Close returns.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = w.fw.Close()
		<-w.ended
	})
	return err
}

// addTree watches dir and its non-ignored subdirectories (parent is the
// level above dir) and returns the root-relative files found, so a
// directory moved in reports its content.
func (w *Watcher) addTree(dir string, parent *ignoreLevel) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var hasIgnore, hasGitignore, hasGit bool
	for _, e := range entries {
		switch e.Name() {
		case ".ignore":
			hasIgnore = true
		case ".gitignore":
			hasGitignore = true
		case ".git":
			hasGit = true
		}
	}
	level := parent.child(dir, hasIgnore, hasGitignore, hasGit)
	if err := w.fw.Add(dir); err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.levels[dir] = level
	w.mu.Unlock()
	var files []string
	for _, e := range entries {
		name := e.Name()
		abs := filepath.Join(dir, name)
		if name == ".git" || level.ignored(abs, name, e.IsDir()) {
			continue
		}
		if e.IsDir() {
			sub, err := w.addTree(abs, level)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				slog.Warn("watch directory", "dir", abs, "err", err)
			}
			files = append(files, sub...)
		} else if rel, ok := within(w.root.Dir(), abs); ok {
			files = append(files, rel)
		}
	}
	return files, nil
}

// relevant maps an event to the root-relative paths it reports (none when
// ignored), watching new directories as they appear.
func (w *Watcher) relevant(ev fsnotify.Event) []string {
	abs := ev.Name
	dir, name := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if name == ".git" || strings.HasPrefix(name, ".ioh-") && strings.HasSuffix(name, ".tmp") {
		return nil
	}
	w.mu.Lock()
	level, watched := w.levels[dir]
	_, wasDir := w.levels[abs]
	w.mu.Unlock()
	if !watched {
		return nil
	}
	fi, statErr := os.Lstat(abs)
	isDir := wasDir || (statErr == nil && fi.IsDir())
	if level.ignored(abs, name, isDir) {
		return nil
	}
	rel, ok := within(w.root.Dir(), abs)
	if !ok {
		return nil
	}
	if name == ".gitignore" || name == ".ignore" {
		w.relevel()
	}
	if statErr != nil && wasDir {
		w.forget(abs)
	}
	if ev.Has(fsnotify.Create) && statErr == nil && fi.IsDir() {
		files, err := w.addTree(abs, level)
		if err != nil {
			slog.Warn("watch new directory", "dir", abs, "err", err)
		}
		return append(files, rel)
	}
	return []string{rel}
}

// forget drops the levels of a removed directory tree (the kernel drops
// its watches itself).
func (w *Watcher) forget(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for d := range w.levels {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			delete(w.levels, d)
		}
	}
}

// relevel rebuilds every directory's ignore level after an ignore file
// changed, watching directories that are no longer ignored.
func (w *Watcher) relevel() {
	w.mu.Lock()
	w.levels = map[string]*ignoreLevel{}
	w.mu.Unlock()
	if _, err := w.addTree(w.root.Dir(), ancestorLevels(w.root.Dir(), w.root.Dir())); err != nil {
		slog.Warn("rewatch workspace", "dir", w.root.Dir(), "err", err)
	}
}

// loop collects events and sends a batch after debounce of quiet (or
// after 10 debounce intervals of continuous change).
func (w *Watcher) loop() {
	defer close(w.ended)
	defer close(w.events)
	pending := map[string]bool{}
	var timer <-chan time.Time
	var first time.Time
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			paths := w.relevant(ev)
			if len(paths) == 0 {
				continue
			}
			if len(pending) == 0 {
				first = time.Now()
			}
			for _, p := range paths {
				pending[p] = true
			}
			wait := w.debounce
			if limit := 10*w.debounce - time.Since(first); limit < wait {
				wait = max(limit, 0)
			}
			timer = time.After(wait)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				pending = map[string]bool{RescanAll: true}
				timer = time.After(w.debounce)
				continue
			}
			slog.Warn("watch workspace", "dir", w.root.Dir(), "err", err)
		case <-timer:
			timer = nil
			batch := make([]string, 0, len(pending))
			for p := range pending {
				batch = append(batch, p)
			}
			if pending[RescanAll] {
				batch = []string{RescanAll}
			}
			slices.Sort(batch)
			pending = map[string]bool{}
			select {
			case w.events <- batch:
			case <-w.done:
				return
			}
		}
	}
}
