package workspace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// The index file, little-endian:
//
//	segment data ...          per segment: postings, then the trigram table
//	footer:
//	  u64 build start (Unix ns)  string root
//	  u32 files; per file: string path, i64 size, i64 mtime, i64 ctime, u64 inode, u8 flags
//	  u32 inputs; per ignore input outside the tree: string path, stamp as above (size -1: absent)
//	  u32 segments; per segment: u32 first file, u32 files, u64 table offset, u32 trigrams, u64 postings offset, u64 postings length
//	trailer: u64 footer offset, 8-byte magic
//
// A trigram table entry is u32 trigram, u32 offset of its posting list in
// the segment's postings; one more entry (trigram 0xffffffff) holds the
// end. A posting list is the segment-local ids of the files holding the
// trigram, delta-coded as uvarints.
const indexMagic = "IOHTRI2\n"

// fileStamp identifies a version of a file.
type fileStamp struct {
	size, mtime, ctime int64
	ino                uint64
}

// File flags.
const (
	flagBinary    = 1 << iota // binary (NUL in the first binaryProbe bytes): never a match
	flagUnindexed             // too many distinct trigrams: always a candidate
	flagRacy                  // changed too close to the build to trust its stamp
)

type indexedFile struct {
	rel   string
	stamp fileStamp
	flags uint8
}

// ignoreInput is a file outside the watched tree whose content decides
// what is ignored (an ignore file above the root, info/exclude, a git
// configuration or global excludes file), with its stamp at build time.
type ignoreInput struct {
	path  string
	stamp fileStamp // size -1: absent
}

// segment is one segment of an open index file. Its trigram table and
// postings stay on disk and are read with pread (not mapped: the kernel
// maps pages around each fault, which would make the whole file resident);
// only every sampleEvery-th trigram of the table is kept in memory.
type segment struct {
	f        *os.File
	first, n uint32
	tableOff int64
	ntri     int
	postOff  int64
	postLen  int64
	sample   []uint32 // trigram of entries 0, sampleEvery, 2×sampleEvery, ...
}

const sampleEvery = 256

// indexData is a loaded index file.
type indexData struct {
	built  int64
	root   string
	files  []indexedFile
	byPath map[string]uint32
	inputs []ignoreInput
	segs   []segment
	unmap  func() error // closes the file
	size   int64
}

// postings returns the global ids of the segment's files holding t (nil
// when none, or when the file cannot be read: the caller treats a read
// error as "every file" through errPostings).
func (s *segment) postings(t trigram) ([]uint32, error) {
	if s.ntri == 0 {
		return nil, nil
	}
	blk := sort.Search(len(s.sample), func(i int) bool { return s.sample[i] > t }) - 1
	if blk < 0 {
		return nil, nil
	}
	lo := blk * sampleEvery
	hi := min(lo+sampleEvery, s.ntri)
	buf := make([]byte, 8*(hi-lo+1)) // one more entry: the end of the last list
	if _, err := s.f.ReadAt(buf, s.tableOff+8*int64(lo)); err != nil {
		return nil, err
	}
	n := hi - lo
	i := sort.Search(n, func(i int) bool { return binary.LittleEndian.Uint32(buf[8*i:]) >= t })
	if i >= n || binary.LittleEndian.Uint32(buf[8*i:]) != t {
		return nil, nil
	}
	from := int64(binary.LittleEndian.Uint32(buf[8*i+4:]))
	to := int64(binary.LittleEndian.Uint32(buf[8*i+12:]))
	if to < from || to > s.postLen {
		return nil, errBadIndex
	}
	p := make([]byte, to-from)
	if _, err := s.f.ReadAt(p, s.postOff+from); err != nil {
		return nil, err
	}
	out := make([]uint32, 0, len(p))
	id := uint64(0)
	for len(p) > 0 {
		d, k := binary.Uvarint(p)
		if k <= 0 {
			return nil, errBadIndex
		}
		id += d
		if id >= uint64(s.n) {
			return nil, errBadIndex
		}
		out = append(out, s.first+uint32(id))
		p = p[k:]
	}
	return out, nil
}

// indexWriter writes an index file: segments as they are built, then the
// footer.
type indexWriter struct {
	f    *os.File
	w    *bufio.Writer
	off  uint64
	segs [][6]uint64
	err  error
}

func (w *indexWriter) bytes(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.off += uint64(n)
	w.err = err
}

func (w *indexWriter) u32(v uint32) { w.bytes(binary.LittleEndian.AppendUint32(nil, v)) }
func (w *indexWriter) u64(v uint64) { w.bytes(binary.LittleEndian.AppendUint64(nil, v)) }
func (w *indexWriter) str(s string) { w.u32(uint32(len(s))); w.bytes([]byte(s)) }
func (w *indexWriter) stamp(s fileStamp) {
	w.u64(uint64(s.size))
	w.u64(uint64(s.mtime))
	w.u64(uint64(s.ctime))
	w.u64(s.ino)
}

// segment writes one segment from its (trigram<<32 | local id) pairs,
// which it sorts.
func (w *indexWriter) segment(first, n uint32, pairs []uint64) {
	slices.Sort(pairs)
	pairs = slices.Compact(pairs)
	// Postings go straight to the file; the table (much smaller) follows.
	var table, buf []byte
	postOff := w.off
	var post uint64
	var last uint64 = 1 << 63
	var prevID uint32
	for _, p := range pairs {
		t, id := p>>32, uint32(p)
		d := id - prevID
		if t != last {
			table = binary.LittleEndian.AppendUint32(table, uint32(t))
			table = binary.LittleEndian.AppendUint32(table, uint32(post))
			last, d = t, id
		}
		prevID = id
		buf = binary.AppendUvarint(buf[:0], uint64(d))
		w.bytes(buf)
		post += uint64(len(buf))
	}
	ntri := uint64(len(table) / 8)
	table = binary.LittleEndian.AppendUint32(table, 0xffffffff)
	table = binary.LittleEndian.AppendUint32(table, uint32(post))
	tableOff := w.off
	w.bytes(table)
	w.segs = append(w.segs, [6]uint64{uint64(first), uint64(n), tableOff, ntri, postOff, post})
}

// finish writes the footer and trailer.
func (w *indexWriter) finish(built int64, root string, files []indexedFile, inputs []ignoreInput) error {
	footer := w.off
	w.u64(uint64(built))
	w.str(root)
	w.u32(uint32(len(files)))
	for _, f := range files {
		w.str(f.rel)
		w.stamp(f.stamp)
		w.bytes([]byte{f.flags})
	}
	w.u32(uint32(len(inputs)))
	for _, in := range inputs {
		w.str(in.path)
		w.stamp(in.stamp)
	}
	w.u32(uint32(len(w.segs)))
	for _, s := range w.segs {
		w.u32(uint32(s[0]))
		w.u32(uint32(s[1]))
		w.u64(s[2])
		w.u32(uint32(s[3]))
		w.u64(s[4])
		w.u64(s[5])
	}
	w.u64(footer)
	w.bytes([]byte(indexMagic))
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// errBadIndex reports an index file that is not one this version wrote.
var errBadIndex = errors.New("not a valid index file")

type reader struct {
	b   []byte
	err bool
}

func (r *reader) take(n int) []byte {
	if r.err || n < 0 || n > len(r.b) {
		r.err = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}
func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}
func (r *reader) str() string { return string(r.take(int(r.u32()))) }
func (r *reader) stamp() fileStamp {
	return fileStamp{size: int64(r.u64()), mtime: int64(r.u64()), ctime: int64(r.u64()), ino: r.u64()}
}

// loadIndex opens and parses the index file at path; a damaged or
// foreign file is an error (the caller rebuilds).
func loadIndex(path string) (*indexData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	x, err := parseIndex(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load index %s: %w", path, err)
	}
	x.unmap = f.Close
	return x, nil
}

func parseIndex(f *os.File) (*indexData, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	n := fi.Size()
	if n < 16 {
		return nil, errBadIndex
	}
	trailer := make([]byte, 16)
	if _, err := f.ReadAt(trailer, n-16); err != nil {
		return nil, err
	}
	if string(trailer[8:]) != indexMagic {
		return nil, errBadIndex
	}
	footer := int64(binary.LittleEndian.Uint64(trailer))
	if footer < 0 || footer > n-16 || n-16-footer > 1<<30 {
		return nil, errBadIndex
	}
	data := make([]byte, n-16-footer)
	if _, err := f.ReadAt(data, footer); err != nil {
		return nil, err
	}
	r := &reader{b: data}
	x := &indexData{built: int64(r.u64()), root: r.str(), size: n}
	nf := r.u32()
	if uint64(nf) > uint64(len(r.b)) {
		return nil, errBadIndex
	}
	x.files = make([]indexedFile, nf)
	x.byPath = make(map[string]uint32, nf)
	for i := range x.files {
		fl := &x.files[i]
		fl.rel = r.str()
		fl.stamp = r.stamp()
		if b := r.take(1); b != nil {
			fl.flags = b[0]
		}
		x.byPath[fl.rel] = uint32(i)
	}
	ni := r.u32()
	if uint64(ni) > uint64(len(r.b)) {
		return nil, errBadIndex
	}
	for range ni {
		x.inputs = append(x.inputs, ignoreInput{path: r.str(), stamp: r.stamp()})
	}
	ns := r.u32()
	if uint64(ns) > uint64(len(r.b)) {
		return nil, errBadIndex
	}
	for range ns {
		s := segment{f: f, first: r.u32(), n: r.u32()}
		s.tableOff, s.ntri = int64(r.u64()), int(r.u32())
		s.postOff, s.postLen = int64(r.u64()), int64(r.u64())
		tableEnd := s.tableOff + 8*int64(s.ntri+1)
		if r.err || s.tableOff < 0 || tableEnd > footer || s.postOff < 0 || s.postLen < 0 || s.postOff+s.postLen > footer ||
			uint64(s.first)+uint64(s.n) > uint64(nf) {
			return nil, errBadIndex
		}
		if err := s.loadSample(); err != nil {
			return nil, err
		}
		x.segs = append(x.segs, s)
	}
	if r.err {
		return nil, errBadIndex
	}
	return x, nil
}

// loadSample reads the segment's table once, keeping every sampleEvery-th
// trigram and checking that the table is sorted.
func (s *segment) loadSample() error {
	buf := make([]byte, 8*sampleEvery)
	prev := int64(-1)
	for lo := 0; lo < s.ntri; lo += sampleEvery {
		k := min(sampleEvery, s.ntri-lo)
		b := buf[:8*k]
		if _, err := s.f.ReadAt(b, s.tableOff+8*int64(lo)); err != nil {
			return err
		}
		for i := 0; i < k; i++ {
			t := int64(binary.LittleEndian.Uint32(b[8*i:]))
			if t <= prev || t > 0xffffff {
				return errBadIndex
			}
			prev = t
		}
		s.sample = append(s.sample, binary.LittleEndian.Uint32(b))
	}
	return nil
}

// indexPath is the index file of the workspace at root under the state
// directory: one per workspace, named like its trace database.
func indexPath(stateDir, root string) string {
	return filepath.Join(stateDir, "index", workspaceKey(root)+".idx")
}
