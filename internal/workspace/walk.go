package workspace

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// walkFile is one regular file found by the walker.
type walkFile struct {
	rel string // root-relative slash path
	abs string
}

// walkJob is a directory to list.
type walkJob struct {
	rel   string
	abs   string
	level *ignoreLevel // for a directory: its parent's level
}

// walker runs a parallel, gitignore-aware traversal: a LIFO queue of
// directories shared by a fixed pool of goroutines that list them and visit
// their files. Every goroutine ends when the queue drains or ctx is done.
type walker struct {
	visit   func(walkFile)
	filter  func(rel string, isDir bool) bool // nil: keep all; false: skip
	mu      sync.Mutex
	cond    *sync.Cond
	stack   []walkJob
	pending int // jobs queued or running
	stop    bool
}

// walkWorkers is the size of the walker's goroutine pool: file reads
// block, so it runs more goroutines than processors.
func walkWorkers() int {
	n := 2 * runtime.GOMAXPROCS(0)
	if n < 4 {
		n = 4
	}
	return n
}

// walk visits every regular, non-ignored file under startRel (a clean
// root-relative directory path) in parallel. visit is called concurrently.
// Symlinks are not followed and ".git" is skipped. filter, when set, is
// asked about every entry below the start.
func (r *Root) walk(ctx context.Context, startRel string, filter func(rel string, isDir bool) bool, visit func(walkFile)) error {
	start, err := r.Resolve(startRel)
	if err != nil {
		return err
	}
	fi, err := os.Stat(start)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		// A single file named explicitly is searched even if ignored, as rg does.
		if startRel != "." {
			visit(walkFile{rel: startRel, abs: start})
		}
		return nil
	}
	w := &walker{visit: visit, filter: filter}
	w.cond = sync.NewCond(&w.mu)
	rel := startRel
	if rel == "." {
		rel = ""
	}
	w.stack = append(w.stack, walkJob{rel: rel, abs: start, level: ancestorLevels(r.dir, start)})
	w.pending = 1

	stopWatch := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.stop = true
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stopWatch()

	var wg sync.WaitGroup
	for range walkWorkers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// work takes jobs until the queue is drained or the walk is stopped.
func (w *walker) work() {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.pending > 0 && !w.stop {
			w.cond.Wait()
		}
		if w.stop || len(w.stack) == 0 {
			w.mu.Unlock()
			return
		}
		j := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.mu.Unlock()

		// Publish the subdirectories first so idle workers take them while
		// this one visits the directory's files.
		dirs, files := w.list(j)
		if len(dirs) > 0 {
			w.mu.Lock()
			w.stack = append(w.stack, dirs...)
			w.pending += len(dirs)
			w.cond.Broadcast()
			w.mu.Unlock()
		}
		for i, f := range files {
			if i%64 == 63 && w.stopped() {
				break
			}
			w.visit(f)
		}

		w.mu.Lock()
		w.pending--
		if w.pending == 0 {
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
}

func (w *walker) stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stop
}

// list reads one directory and returns its kept subdirectories and files.
func (w *walker) list(j walkJob) ([]walkJob, []walkFile) {
	f, err := os.Open(j.abs)
	if err != nil {
		return nil, nil // unreadable directories are skipped, as rg does
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(entries) == 0 {
		return nil, nil
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
	level := j.level.child(j.abs, hasIgnore, hasGitignore, hasGit)
	var dirs []walkJob
	files := make([]walkFile, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		t := e.Type()
		isDir := t.IsDir()
		if !isDir && !t.IsRegular() {
			continue // symlinks, devices, sockets
		}
		abs := filepath.Join(j.abs, name)
		if level.ignored(abs, name, isDir) {
			continue
		}
		rel := name
		if j.rel != "" {
			rel = j.rel + "/" + name
		}
		if w.filter != nil && !w.filter(rel, isDir) {
			continue
		}
		if isDir {
			dirs = append(dirs, walkJob{rel: rel, abs: abs, level: level})
		} else {
			files = append(files, walkFile{rel: rel, abs: abs})
		}
	}
	return dirs, files
}

// ignoredRel reports whether a root-relative path would be skipped by the
// walker (used for files that exist only in an overlay).
func (r *Root) ignoredRel(rel string) bool {
	abs := filepath.Join(r.dir, filepath.FromSlash(rel))
	level := ancestorLevels(r.dir, abs)
	dir := filepath.Dir(abs)
	// ancestorLevels stops above abs; check each ancestor inside the root.
	for d := dir; ; d = filepath.Dir(d) {
		if _, ok := within(r.dir, d); !ok || d == r.dir {
			break
		}
		if filepath.Base(d) == ".git" || ancestorLevels(r.dir, d).ignored(d, filepath.Base(d), true) {
			return true
		}
	}
	return filepath.Base(abs) == ".git" || level.ignored(abs, filepath.Base(abs), false)
}
