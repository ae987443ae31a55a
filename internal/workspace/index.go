package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sync"
	"sync/atomic"
	"time"
)

// IndexOptions configures OpenIndex.
type IndexOptions struct {
	// StateDir is the state directory; the index file is
	// StateDir/index/<workspace>-<hash>.idx.
	StateDir string
	// Watch keeps the index fresh for a long-lived process (the server):
	// a watcher records every change as it happens and a background
	// goroutine builds the index and rebuilds it when many files changed.
	// Without Watch (a one-shot command) the index file is only read, and
	// each search checks every file's stamp against it.
	Watch bool
	// Debounce is the watcher's batching interval (default 100ms).
	Debounce time.Duration
	Logger   *slog.Logger
	// Private names root-relative paths that are never indexed (files the
	// read policy guards); Secrets are values whose files are never
	// indexed either. Such files are searched by reading them, so results
	// do not change; the index file under the state directory never
	// carries their trigrams.
	Private func(rel string) bool
	Secrets []string
}

// rebuildDirty is how many changed paths make the maintainer rebuild the
// index (changed files are searched directly until then).
const rebuildDirty = 256

// Index is a trigram index of a workspace's files, kept on disk under the
// state directory. Searches through it return exactly what a scan would:
// files that changed since it was built are searched directly, and while
// it is cold or cannot be trusted the search scans.
type Index struct {
	root    *Root
	path    string
	priv    *indexPrivacy
	log     *slog.Logger
	watch   bool
	watcher *Watcher

	use  sync.RWMutex // held for reading by searches, for writing to swap data
	mu   sync.Mutex   // guards the fields below
	data *indexData   // nil: cold
	// dirty holds the root-relative paths changed since data was built,
	// each with the sequence number of its last change.
	dirty    map[string]uint64
	seq      uint64
	staleSeq uint64 // the last change that may have changed the file set (0: none since the build)
	builds   int

	served, scanned atomic.Int64 // searches answered through the index, left to the scan

	kick   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// OpenIndex opens the index of r. With Watch it starts the watcher and
// the background goroutine that loads or builds the index (searches scan
// until it is warm); Close stops them. Without Watch it loads the index
// file if one exists. It attaches the index to r, so r's searches and
// those of its change sets use it.
func OpenIndex(r *Root, o IndexOptions) (*Index, error) {
	if o.StateDir == "" {
		return nil, errors.New("open index: no state directory")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	x := &Index{root: r, path: indexPath(o.StateDir, r.Dir()), priv: newIndexPrivacy(o), log: o.Logger, watch: o.Watch,
		dirty: map[string]uint64{}, kick: make(chan struct{}, 1)}
	if !o.Watch {
		if d, err := loadIndex(x.path); err == nil && d.root == r.Dir() {
			x.data = d
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			x.log.Warn("index unusable; searches scan", "err", err)
		}
		r.idx.Store(x)
		return x, nil
	}
	w, err := newSyncedWatcher(r, o.Debounce, x.path+".sync", x.changed)
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	x.watcher = w
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	x.wg.Add(2)
	go func() { // ends when the watcher closes its events
		defer x.wg.Done()
		for range w.Events() {
			x.poke()
		}
	}()
	go func() { // ends when Close cancels ctx
		defer x.wg.Done()
		x.maintain(ctx)
	}()
	r.idx.Store(x)
	return x, nil
}

// Close stops the watcher and the background goroutines, detaches the
// index from its root and releases the index file.
func (x *Index) Close() error {
	x.root.idx.CompareAndSwap(x, nil)
	var err error
	if x.watcher != nil {
		x.cancel()
		err = x.watcher.Close()
		x.wg.Wait()
	}
	x.use.Lock()
	defer x.use.Unlock()
	if x.data != nil {
		if uerr := x.data.unmap(); err == nil {
			err = uerr
		}
		x.data = nil
	}
	return err
}

// IndexStatus describes an index for logs, tests and benchmarks.
type IndexStatus struct {
	Warm   bool  // searches use it
	Files  int   // files indexed
	Bytes  int64 // size of the index file
	Dirty  int   // paths changed since the build, searched directly
	Builds int   // builds completed by this process
	// Served and Scanned count the searches answered through the index
	// and those left to a scan (cold, file set in doubt).
	Served, Scanned int64
}

// Status reports the index's state.
func (x *Index) Status() IndexStatus {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := IndexStatus{Dirty: len(x.dirty), Builds: x.builds, Served: x.served.Load(), Scanned: x.scanned.Load()}
	if x.data != nil {
		s.Warm = x.staleSeq == 0
		s.Files, s.Bytes = len(x.data.files), x.data.size
	}
	return s
}

// WaitWarm waits until searches use the index (tests, benchmarks).
func (x *Index) WaitWarm(ctx context.Context) error {
	for {
		if x.Status().Warm {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the index: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// changed is the watcher's hook: it runs on the watcher's goroutine for
// every change as it is read.
func (x *Index) changed(paths []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seq++
	for _, p := range paths {
		if b := path.Base(p); p == RescanAll || b == ".gitignore" || b == ".ignore" {
			x.staleSeq = x.seq // what is ignored may have changed anywhere
		}
		x.dirty[p] = x.seq
	}
}

func (x *Index) poke() {
	select {
	case x.kick <- struct{}{}:
	default:
	}
}

// maintain loads the index file (checking every file's stamp) or builds
// it, then rebuilds whenever the file set may have changed or many files
// did.
func (x *Index) maintain(ctx context.Context) {
	if d, err := loadIndex(x.path); err == nil && d.root == x.root.Dir() {
		x.adopt(ctx, d)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		x.log.Warn("index unusable; rebuilding", "err", err)
	}
	var last time.Time
	var took time.Duration
	for {
		x.mu.Lock()
		need := x.data == nil || x.staleSeq != 0 || len(x.dirty) > rebuildDirty
		x.mu.Unlock()
		if need {
			// A tree that keeps changing (a build writing outside the
			// ignored directories) must not keep a core busy: rebuilds
			// take at most a fifth of the time. Searches stay exact
			// meanwhile (they scan, or search changed files directly).
			if wait := 4*took - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
			last = time.Now()
			err := x.rebuild(ctx)
			took = time.Since(last)
			if err != nil && ctx.Err() == nil {
				x.log.Warn("build index", "err", err)
				select { // retry later
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Second):
				}
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-x.kick:
		}
	}
}

// adopt takes a loaded index file after marking every file whose stamp
// changed since it was written, every new file and every removed one as
// dirty (the watcher is already recording later changes).
func (x *Index) adopt(ctx context.Context, d *indexData) {
	if !sameInputs(d.inputs, ignoreInputs(x.root.Dir())) {
		d.unmap()
		return
	}
	var mu sync.Mutex
	var changed []string
	seen := make([]bool, len(d.files))
	err := x.root.walk(ctx, ".", nil, func(f walkFile) {
		id, ok := d.byPath[f.rel]
		if ok {
			seen[id] = true
		}
		if !ok || !d.files[id].fresh(f.abs) {
			mu.Lock()
			changed = append(changed, f.rel)
			mu.Unlock()
		}
	})
	if err != nil {
		d.unmap()
		return
	}
	for i, s := range seen {
		if !s {
			changed = append(changed, d.files[i].rel)
		}
	}
	x.use.Lock()
	x.mu.Lock()
	x.seq++
	for _, p := range changed {
		if _, ok := x.dirty[p]; !ok {
			x.dirty[p] = x.seq
		}
	}
	x.data = d
	x.mu.Unlock()
	x.use.Unlock()
}

// fresh reports whether the file at abs is the version indexed.
func (f *indexedFile) fresh(abs string) bool {
	if f.flags&flagRacy != 0 {
		return false
	}
	st, ok := statStamp(abs)
	return ok && st == f.stamp
}

func sameInputs(a, b []ignoreInput) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rebuild builds the index file anew and swaps it in. Changes recorded
// before the build started are in it; later ones stay dirty.
func (x *Index) rebuild(ctx context.Context) error {
	if err := x.watcher.Sync(ctx); err != nil {
		return err
	}
	x.mu.Lock()
	start := x.seq
	x.mu.Unlock()
	d, err := buildIndex(ctx, x.root, x.path, x.priv)
	if err != nil {
		return err
	}
	x.use.Lock()
	x.mu.Lock()
	old := x.data
	x.data = d
	for p, s := range x.dirty {
		if s <= start {
			delete(x.dirty, p)
		}
	}
	if x.staleSeq <= start {
		x.staleSeq = 0
	}
	x.builds++
	x.mu.Unlock()
	x.use.Unlock()
	if old != nil {
		old.unmap()
	}
	x.log.Debug("index built", "files", len(d.files), "bytes", d.size)
	return nil
}

// BuildIndex builds (or rebuilds) the index file of r under o.StateDir
// now, for a command that wants a warm index for later searches. Only
// StateDir, Private and Secrets of o are used.
func BuildIndex(ctx context.Context, r *Root, o IndexOptions) (IndexStatus, error) {
	if o.StateDir == "" {
		return IndexStatus{}, errors.New("build index: no state directory")
	}
	d, err := buildIndex(ctx, r, indexPath(o.StateDir, r.Dir()), newIndexPrivacy(o))
	if err != nil {
		return IndexStatus{}, err
	}
	defer d.unmap()
	return IndexStatus{Warm: true, Files: len(d.files), Bytes: d.size, Builds: 1}, nil
}
