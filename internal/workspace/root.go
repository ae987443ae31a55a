package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// maxSymlinks bounds symlink expansion while resolving one path, as the
// kernel's ELOOP limit does.
const maxSymlinks = 40

// Root is a confined workspace directory. Safe for concurrent use.
type Root struct {
	dir string

	mu   sync.RWMutex
	docs map[string][]byte // open editor buffers by clean relative path

	idx atomic.Pointer[Index] // searches use it when set and warm (index.go)
}

// NewRoot opens dir (made absolute, symlinks resolved) as a workspace root.
func NewRoot(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open workspace %s: not a directory", dir)
	}
	return &Root{dir: real, docs: map[string][]byte{}}, nil
}

// Dir is the root's absolute, symlink-free directory.
func (r *Root) Dir() string { return r.dir }

// CleanPath validates a workspace-relative slash path lexically and returns
// its clean form ("." for the root itself). It refuses absolute paths, NUL
// bytes and ".." escapes; it does not look at the disk.
func CleanPath(rel string) (string, error) {
	if strings.IndexByte(rel, 0) >= 0 {
		return "", &PathError{Path: rel, Err: ErrInvalidPath}
	}
	if filepath.Separator == '\\' {
		// On Windows a backslash separates too: "a\..\..\x" must not
		// slip past the slash-based cleaning below.
		rel = strings.ReplaceAll(rel, `\`, "/")
	}
	if path.IsAbs(rel) || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" || strings.HasPrefix(rel, `\`) {
		return "", &PathError{Path: rel, Err: ErrAbsolute}
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", &PathError{Path: rel, Err: ErrEscape}
	}
	return c, nil
}

// Resolve maps a workspace-relative slash path to an absolute path inside
// the root, refusing absolute paths, ".." escapes and symlinks that leave
// the root (every component checked). Symlinks inside the root are
// followed, so the result is the real location. A path whose tail does not
// exist yet is resolved through its deepest existing parent.
func (r *Root) Resolve(rel string) (string, error) {
	c, err := CleanPath(rel)
	if err != nil {
		return "", err
	}
	if c == "." {
		return r.dir, nil
	}
	parts := strings.Split(c, "/")
	cur := r.dir
	links := 0
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		switch p {
		case "", ".":
			continue
		case "..": // only from a symlink target: cur is real, so Dir is exact
			if cur == r.dir {
				return "", &PathError{Path: rel, Err: ErrSymlinkEscape}
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, p)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
			// The rest does not exist: finish lexically, still confined.
			rest := path.Clean(strings.Join(parts[i:], "/"))
			if rest == ".." || strings.HasPrefix(rest, "../") {
				return "", &PathError{Path: rel, Err: ErrSymlinkEscape}
			}
			return filepath.Join(cur, filepath.FromSlash(rest)), nil
		}
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", rel, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", &PathError{Path: rel, Err: ErrInvalidPath}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", rel, err)
		}
		if filepath.IsAbs(target) {
			inside, ok := within(r.dir, filepath.Clean(target))
			if !ok {
				return "", &PathError{Path: rel, Err: ErrSymlinkEscape}
			}
			cur = r.dir
			target = inside
		}
		tparts := strings.Split(filepath.ToSlash(target), "/")
		parts = append(tparts, parts[i+1:]...)
		i = -1
	}
	return cur, nil
}

// within reports whether abs lies inside dir and returns its relative
// slash path ("." for dir itself).
func within(dir, abs string) (string, bool) {
	if abs == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(abs, prefix) {
		return "", false
	}
	return filepath.ToSlash(abs[len(prefix):]), true
}

// Rel maps an absolute path inside the root to its relative slash path.
func (r *Root) Rel(abs string) (string, error) {
	if !filepath.IsAbs(abs) {
		return "", fmt.Errorf("rel %q: not an absolute path", abs)
	}
	clean := filepath.Clean(abs)
	if rel, ok := within(r.dir, clean); ok {
		return rel, nil
	}
	// The caller may name the root through a symlinked ancestor (macOS /tmp).
	if real, err := filepath.EvalSymlinks(clean); err == nil {
		if rel, ok := within(r.dir, real); ok {
			return rel, nil
		}
	}
	return "", &PathError{Path: abs, Err: ErrEscape}
}

// ReadFile reads a file, seeing open editor documents over the disk.
func (r *Root) ReadFile(rel string) ([]byte, error) {
	abs, err := r.Resolve(rel)
	if err != nil {
		return nil, err
	}
	c, _ := CleanPath(rel)
	if data, ok := r.document(c); ok {
		return data, nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c, err)
	}
	return data, nil
}

// document returns a copy of an open document's content.
func (r *Root) document(clean string) ([]byte, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.docs[clean]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), d...), true
}

// documents returns a snapshot of the open documents (content shared: the
// stored slices are never mutated, only replaced).
func (r *Root) documents() map[string][]byte {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.docs) == 0 {
		return nil
	}
	m := make(map[string][]byte, len(r.docs))
	for k, v := range r.docs {
		m[k] = v
	}
	return m
}

// SetDocument overlays an open editor buffer's content over the disk.
// Paths that do not stay inside the root are ignored.
func (r *Root) SetDocument(rel string, content []byte) {
	c, err := CleanPath(rel)
	if err != nil || c == "." {
		return
	}
	r.mu.Lock()
	r.docs[c] = append([]byte(nil), content...)
	r.mu.Unlock()
}

// CloseDocument drops an overlay set by SetDocument.
func (r *Root) CloseDocument(rel string) {
	c, err := CleanPath(rel)
	if err != nil {
		return
	}
	r.mu.Lock()
	delete(r.docs, c)
	r.mu.Unlock()
}
