package workspace

import (
	"context"
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

	// hook, when set, is called from the event goroutine with each
	// change as it is read, before debouncing (RescanAll when events
	// were lost).
	hook func(paths []string)

	// The sync barrier: Sync writes a byte to syncDir/marker and waits
	// until the event goroutine has read that write's event, so every
	// change made before the call has been seen (inotify queues events in
	// order). One write is outstanding at a time (syncWrite), so no two
	// marker events can be coalesced and each write is one event.
	syncDir   string
	syncFile  *os.File
	syncWrite sync.Mutex
	syncMu    sync.Mutex
	syncCond  *sync.Cond
	syncNext  uint64 // writes made
	syncSeen  uint64 // marker events read
}

// NewWatcher starts watching every non-ignored directory under r. Batches
// are sent on Events at most once per debounce interval of quiet; Close
// stops the watcher and closes Events.
func NewWatcher(r *Root, debounce time.Duration) (*Watcher, error) {
	return newSyncedWatcher(r, debounce, "", nil)
}

// newSyncedWatcher is NewWatcher with a change hook and a sync barrier
// whose marker files go in syncDir (a private directory outside the
// workspace).
func newSyncedWatcher(r *Root, debounce time.Duration, syncDir string, hook func([]string)) (*Watcher, error) {
	if syncDir != "" {
		if err := os.MkdirAll(syncDir, 0o700); err != nil {
			return nil, fmt.Errorf("watch %s: %w", r.Dir(), err)
		}
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", r.Dir(), err)
	}
	if debounce <= 0 {
		debounce = 100 * time.Millisecond
	}
	w := &Watcher{root: r, fw: fw, debounce: debounce, events: make(chan []string),
		done: make(chan struct{}), ended: make(chan struct{}), levels: map[string]*ignoreLevel{},
		hook: hook, syncDir: syncDir}
	w.syncCond = sync.NewCond(&w.syncMu)
	if syncDir != "" {
		f, err := os.OpenFile(filepath.Join(syncDir, "marker"), os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			err = fw.Add(syncDir)
		}
		if err != nil {
			if f != nil {
				f.Close()
			}
			fw.Close()
			return nil, fmt.Errorf("watch %s: %w", syncDir, err)
		}
		w.syncFile = f
	}
	if _, err := w.addTree(r.Dir(), ancestorLevels(r.Dir(), r.Dir())); err != nil {
		fw.Close()
		return nil, fmt.Errorf("watch %s: %w", r.Dir(), err)
	}
	go w.loop() // ends when Close closes done and the fsnotify watcher
	return w, nil
}

// Sync returns once the watcher has read every event of changes made
// before the call (so its hook has seen them), or with an error when ctx
// ends, the watcher closes or it has no sync directory.
func (w *Watcher) Sync(ctx context.Context) error {
	if w.syncFile == nil {
		return errors.New("watch: no sync directory")
	}
	w.syncWrite.Lock()
	defer w.syncWrite.Unlock()
	w.syncMu.Lock()
	w.syncNext++
	token := w.syncNext
	w.syncMu.Unlock()
	if _, err := w.syncFile.WriteAt([]byte{'.'}, 0); err != nil {
		return fmt.Errorf("watch sync: %w", err)
	}
	stop := context.AfterFunc(ctx, func() {
		w.syncMu.Lock()
		w.syncCond.Broadcast()
		w.syncMu.Unlock()
	})
	defer stop()
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	for w.syncSeen < token {
		select {
		case <-w.done:
			return errors.New("watch sync: watcher closed")
		default:
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("watch sync: %w", err)
		}
		w.syncCond.Wait()
	}
	return nil
}

// synced handles an event in the sync directory: a write to the marker
// is the next write's event.
func (w *Watcher) synced(ev fsnotify.Event) {
	if !ev.Has(fsnotify.Write) || filepath.Base(ev.Name) != "marker" {
		return
	}
	w.syncMu.Lock()
	n := w.syncSeen + 1
	w.syncMu.Unlock()
	w.releaseSync(n)
}

// releaseSync marks tokens up to n as seen and wakes the waiters.
func (w *Watcher) releaseSync(n uint64) {
	w.syncMu.Lock()
	if n > w.syncSeen {
		w.syncSeen = n
	}
	w.syncCond.Broadcast()
	w.syncMu.Unlock()
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
		if w.syncFile != nil {
			w.syncFile.Close()
		}
		w.syncMu.Lock()
		w.syncCond.Broadcast() // Sync callers see done
		w.syncMu.Unlock()
	})
	return err
}

// addTree watches dir and its non-ignored subdirectories (parent is the
// level above dir) and returns the root-relative files found, so a
// directory moved in reports its content.
func (w *Watcher) addTree(dir string, parent *ignoreLevel) ([]string, error) {
	// Watch before listing: a file created in between is then either
	// listed or reported by an event.
	if err := w.fw.Add(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.fw.Remove(dir)
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

// forget drops the levels and watches of a directory tree that was
// removed or moved away. A moved directory keeps its kernel watches, and
// fsnotify would go on naming their events by the old path: the watches
// are removed, and the tree is watched again under its new name when its
// creation there is seen.
func (w *Watcher) forget(dir string) {
	w.mu.Lock()
	var gone []string
	for d := range w.levels {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			delete(w.levels, d)
			gone = append(gone, d)
		}
	}
	w.mu.Unlock()
	for _, d := range gone {
		_ = w.fw.Remove(d) // a deleted directory's watch is already gone
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
			if w.syncDir != "" && filepath.Dir(ev.Name) == w.syncDir {
				w.synced(ev)
				continue
			}
			paths := w.relevant(ev)
			if len(paths) == 0 {
				continue
			}
			if w.hook != nil {
				w.hook(paths)
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
				if w.hook != nil {
					w.hook([]string{RescanAll})
				}
				// Marker events may be lost too: release every waiter
				// (the hook has been told that anything may have changed).
				w.syncMu.Lock()
				next := w.syncNext
				w.syncMu.Unlock()
				w.releaseSync(next)
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
