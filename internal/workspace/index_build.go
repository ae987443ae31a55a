package workspace

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Build bounds: a file with more distinct trigrams than maxFileTrigrams
// (a large data file) is not indexed but always searched; a segment holds
// at most segmentPairs postings (a file has no more distinct trigrams than
// bytes), so building holds segmentPairs×8 bytes of postings plus one
// 2 MiB trigram bitmap per worker, whatever the size of the tree.
const (
	maxFileTrigrams = 1 << 18
	segmentPairs    = 2 << 20
	batchFiles      = 256
	racySlack       = int64(100 * time.Millisecond)
)

// workspaceKey names a workspace's files in the state directory: its base
// name and a hash of its path.
func workspaceKey(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	b := []byte(filepath.Base(root))
	for i, c := range b {
		if !(c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b) + "-" + hex.EncodeToString(sum[:8])
}

// ignoreInputs lists, with their stamps, the files outside the workspace
// tree that decide what is ignored in it: ignore files in the directories
// above the root up to its repository's top, the repository's
// info/exclude and configuration, the user's git configuration and global
// excludes file. The index is only trusted while they are unchanged.
func ignoreInputs(root string) []ignoreInput {
	top, ok := repoTop(root)
	if !ok {
		return nil
	}
	var paths []string
	for d := filepath.Dir(root); top != root; d = filepath.Dir(d) {
		paths = append(paths, filepath.Join(d, ".gitignore"), filepath.Join(d, ".ignore"))
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	common := gitCommonDir(top)
	paths = append(paths, filepath.Join(top, ".git"), filepath.Join(common, "info", "exclude"))
	paths = append(paths, gitConfigFiles(common)...)
	if g := globalExcludesFile(common); g != "" {
		paths = append(paths, g)
	}
	out := make([]ignoreInput, 0, len(paths))
	for _, p := range paths {
		st, ok := statStamp(p)
		if !ok {
			st = fileStamp{size: -1}
		}
		out = append(out, ignoreInput{path: p, stamp: st})
	}
	return out
}

// trigramBits collects the distinct trigrams of one file.
type trigramBits struct {
	bits []uint64 // 1<<24 bits
	list []uint32
	buf  []byte
}

func newTrigramBits() *trigramBits {
	return &trigramBits{bits: make([]uint64, 1<<24/64), buf: make([]byte, readChunk)}
}

// file reads abs and returns its distinct trigrams (valid until the next
// call) and its flags.
func (tb *trigramBits) file(abs string) ([]uint32, uint8, error) {
	for _, t := range tb.list {
		tb.bits[t>>6] &^= 1 << (t & 63)
	}
	tb.list = tb.list[:0]
	f, err := openRaw(abs)
	if err != nil {
		return nil, 0, err
	}
	defer f.close()
	var t uint32
	seen := 0
	for first := true; ; first = false {
		n, eof, err := f.read(tb.buf)
		if err != nil {
			return nil, 0, err
		}
		b := tb.buf[:n]
		if first && isBinary(b) {
			return nil, flagBinary, nil
		}
		for _, c := range b {
			t = (t<<8 | uint32(c)) & 0xffffff
			seen++
			if seen < 3 {
				continue
			}
			if w, bit := t>>6, uint64(1)<<(t&63); tb.bits[w]&bit == 0 {
				tb.bits[w] |= bit
				tb.list = append(tb.list, t)
			}
		}
		if len(tb.list) > maxFileTrigrams {
			return nil, flagUnindexed, nil
		}
		if eof || n == 0 {
			return tb.list, 0, nil
		}
	}
}

// buildIndex walks the workspace as grep does, indexes every file and
// writes the index file at path atomically (0600, in a 0700 directory).
func buildIndex(ctx context.Context, r *Root, path string, priv *indexPrivacy) (*indexData, error) {
	start := time.Now().UnixNano()
	inputs := ignoreInputs(r.Dir())
	var mu sync.Mutex
	var files []indexedFile
	err := r.walk(ctx, ".", nil, func(f walkFile) {
		st, ok := statStamp(f.abs)
		if !ok {
			return
		}
		var flags uint8
		if max(st.ctime, st.mtime) >= start-racySlack {
			flags = flagRacy
		}
		mu.Lock()
		files = append(files, indexedFile{rel: f.rel, stamp: st, flags: flags})
		mu.Unlock()
	})
	if err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	slices.SortFunc(files, func(a, b indexedFile) int { return strings.Compare(a.rel, b.rel) })

	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	removeStaleTemps(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	w := &indexWriter{f: tmp, w: bufio.NewWriterSize(tmp, 256<<10)}
	err = writeSegments(ctx, r, files, w, priv)
	if err == nil {
		err = w.finish(start, r.Dir(), files, inputs)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	return loadIndex(path)
}

// writeSegments extracts the trigrams of files (in batches, in parallel)
// and writes segments of about segmentPairs postings.
func writeSegments(ctx context.Context, r *Root, files []indexedFile, w *indexWriter, priv *indexPrivacy) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	bits := make([]*trigramBits, workers)
	for i := range bits {
		bits[i] = newTrigramBits()
	}
	pairs := make([]uint64, 0, segmentPairs)
	segFirst := 0
	// bound is the most pairs a file can add.
	bound := func(f *indexedFile) int { return int(min(max(f.stamp.size, 0), maxFileTrigrams)) }
	for lo := 0; lo < len(files); {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(pairs)+bound(&files[lo]) > segmentPairs && lo > segFirst {
			w.segment(uint32(segFirst), uint32(lo-segFirst), pairs)
			pairs = pairs[:0]
			segFirst = lo
		}
		hi, room := lo, segmentPairs-len(pairs)
		for hi < len(files) && hi-lo < batchFiles && bound(&files[hi]) <= room {
			room -= bound(&files[hi])
			hi++
		}
		hi = max(hi, lo+1)
		var mu sync.Mutex
		var wg sync.WaitGroup
		next := lo
		for wi := range workers {
			wg.Add(1)
			go func(tb *trigramBits) {
				defer wg.Done()
				for {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					if i >= hi {
						return
					}
					f := &files[i]
					var tris []uint32
					var flags uint8
					var err error
					if priv.named(f.rel) {
						flags = flagUnindexed // private: always read, never indexed
					} else if tris, flags, err = tb.file(r.join(f.rel)); err != nil {
						tris, flags = nil, flagUnindexed // unreadable now: always searched
					} else if priv.holds(tb) {
						tris, flags = nil, flagUnindexed // may hold a secret
					}
					f.flags |= flags
					mu.Lock()
					for _, t := range tris {
						pairs = append(pairs, uint64(t)<<32|uint64(i-segFirst))
					}
					mu.Unlock()
				}
			}(bits[wi])
		}
		wg.Wait()
		lo = hi
		if lo == len(files) {
			w.segment(uint32(segFirst), uint32(lo-segFirst), pairs)
		}
	}
	if len(files) == 0 {
		w.segment(0, 0, nil)
	}
	return w.err
}

// removeStaleTemps removes what builds of this index that were cut off
// (a killed server) left behind; a build still running elsewhere is
// younger than an hour.
func removeStaleTemps(path string) {
	entries, _ := os.ReadDir(filepath.Dir(path))
	prefix := filepath.Base(path) + "."
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
			os.Remove(filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
}
