package workspace

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// grep searches v through the index. ok is false when the index cannot
// answer exactly (cold, its file set in doubt, a searched directory it
// does not cover) and the caller scans instead.
func (x *Index) grep(ctx context.Context, v *view, o GrepOptions) (ms []Match, total int, ok bool, _ error) {
	defer func() {
		if ok {
			x.served.Add(1)
		} else {
			x.scanned.Add(1)
		}
	}()
	m, err := compileGrep(o)
	if err != nil {
		return nil, 0, false, nil // the scan reports it
	}
	dir, err := CleanPath(o.Dir)
	if err != nil {
		return nil, 0, false, nil
	}
	globs, err := newGlobFilter(o.Globs, dir)
	if err != nil {
		return nil, 0, false, nil
	}
	if dir != "." {
		if _, isDir, ok := x.root.reachable(dir); !ok || !isDir {
			return nil, 0, false, nil
		}
	}
	if x.watch {
		// Every change made before this search has reached x.changed.
		if err := x.watcher.Sync(ctx); err != nil {
			return nil, 0, false, nil
		}
	}
	x.use.RLock()
	defer x.use.RUnlock()
	x.mu.Lock()
	d, stale := x.data, x.staleSeq != 0
	var dirty map[string]uint64
	if x.watch {
		dirty = maps.Clone(x.dirty)
	}
	x.mu.Unlock()
	if d == nil || stale {
		return nil, 0, false, nil
	}
	keep := func(rel string) bool {
		return inDir(rel, dir) && (globs == nil || filterPath(globs.keep, rel, dir))
	}
	cand := d.candidates(m.tq)
	skip := func(id uint32) bool {
		f := &d.files[id]
		return f.flags&flagBinary != 0 || (cand != nil && !cand[id] && f.flags&flagUnindexed == 0)
	}
	res := results{skip: o.Skip}
	if !x.watch {
		// No watcher: the walk gives the file set, each file's stamp says
		// whether the index knows its content.
		err := v.each(ctx, dir, globs.keep, func(rel, abs string, data []byte, ov bool) {
			if !ov {
				if id, ok := d.byPath[rel]; ok && d.files[id].fresh(abs) && skip(id) {
					return
				}
			}
			res.add(m.searchOne(rel, abs, data, ov))
		})
		if err != nil {
			return nil, 0, false, nil
		}
		ms, total = res.sorted(o.Max)
		return ms, total, true, nil
	}
	if !sameInputs(d.inputs, ignoreInputs(x.root.Dir())) {
		x.mu.Lock()
		x.seq++
		x.staleSeq = x.seq
		x.mu.Unlock()
		x.poke()
		return nil, 0, false, nil
	}
	jobs, err := x.jobs(ctx, v, d, dirty, keep, skip)
	if err != nil {
		return nil, 0, false, nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(walkWorkers(), max(1, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				j := &jobs[i]
				res.add(m.searchOne(j.rel, j.abs, j.data, j.ov))
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, true, err
	}
	ms, total = res.sorted(o.Max)
	return ms, total, true, nil
}

// searchJob is one file a search reads: from the overlay when ov.
type searchJob struct {
	rel, abs string
	data     []byte
	ov       bool
}

// jobs lists what a search must read, as a scan of v would: the indexed
// files that may match and are not under a changed path, every file now
// under a changed path, overlay content for files the scan would visit,
// and overlay-only files.
func (x *Index) jobs(ctx context.Context, v *view, d *indexData, dirty map[string]uint64, keep func(string) bool, skip func(uint32) bool) ([]searchJob, error) {
	covered := func(rel string) bool {
		if len(dirty) == 0 {
			return false
		}
		for p := rel; ; {
			if _, ok := dirty[p]; ok {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				return false
			}
			p = p[:i]
		}
	}
	// The files under changed paths, as they are now.
	fresh := map[string]bool{}
	var mu sync.Mutex
	for _, p := range slices.Sorted(maps.Keys(dirty)) {
		if i := strings.LastIndexByte(p, '/'); i >= 0 && covered(p[:i]) {
			continue // a changed parent is listed whole
		}
		_, isDir, ok := x.root.reachable(p)
		switch {
		case !ok:
		case !isDir:
			if keep(p) {
				fresh[p] = true
			}
		default:
			err := x.root.walk(ctx, p, nil, func(f walkFile) {
				if keep(f.rel) {
					mu.Lock()
					fresh[f.rel] = true
					mu.Unlock()
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	var jobs []searchJob
	add := func(rel string, indexed bool, id uint32) {
		if v.ov.deleted[rel] {
			return
		}
		if data, ok := v.ov.files[rel]; ok {
			jobs = append(jobs, searchJob{rel: rel, data: data, ov: true})
			return
		}
		if indexed && skip(id) {
			return
		}
		jobs = append(jobs, searchJob{rel: rel, abs: x.root.join(rel)})
	}
	for id := range d.files {
		rel := d.files[id].rel
		if keep(rel) && !covered(rel) {
			add(rel, true, uint32(id))
		}
	}
	for rel := range fresh {
		add(rel, false, 0)
	}
	// Files that exist only in the overlay.
	for rel, data := range v.ov.files {
		if v.ov.deleted[rel] || !keep(rel) || fresh[rel] {
			continue
		}
		if _, ok := d.byPath[rel]; ok && !covered(rel) {
			continue // on disk and in the file set: added above
		}
		abs := x.root.join(rel)
		if _, err := os.Lstat(abs); err == nil || x.root.ignoredRel(rel) {
			continue
		}
		jobs = append(jobs, searchJob{rel: rel, data: data, ov: true})
	}
	return jobs, nil
}

// candidates marks the files whose trigrams satisfy q; nil when every
// file may match.
func (d *indexData) candidates(q *tquery) []bool {
	if q.op == qAll {
		return nil
	}
	c := make([]bool, len(d.files))
	for i := range d.segs {
		s := &d.segs[i]
		set := q.eval(s.postings)
		if set.all {
			for id := s.first; id < s.first+s.n && int(id) < len(c); id++ {
				c[id] = true
			}
			continue
		}
		for _, id := range set.ids {
			if int(id) < len(c) {
				c[id] = true
			}
		}
	}
	return c
}

// reachable reports whether the walker from the root would reach rel:
// every component exists, none is a symlink or ".git" or ignored, and all
// but the last are directories. isDir tells what the last one is.
func (r *Root) reachable(rel string) (abs string, isDir, ok bool) {
	level := ancestorLevels(r.dir, r.dir)
	cur := r.dir
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		level = level.child(cur, exists(cur, ".ignore"), exists(cur, ".gitignore"), exists(cur, ".git"))
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		if err != nil || name == ".git" || name == "" || name == "." || name == ".." {
			return "", false, false
		}
		isDir = fi.IsDir()
		if (!isDir && !fi.Mode().IsRegular()) || (i < len(parts)-1 && !isDir) || level.ignored(next, name, isDir) {
			return "", false, false
		}
		cur = next
	}
	return cur, isDir, true
}
