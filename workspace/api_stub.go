package workspace

// This file fixes the workspace API that the other packages code against
// while the implementation is being written. Its owner replaces each
// declaration with the real one (same signature) and deletes this file.

import (
	"context"
	"errors"
	"io/fs"
)

var errTODO = errors.New("workspace: not implemented yet")

// Root is a confined workspace directory.
type Root struct{ dir string }

// NewRoot opens dir (made absolute, symlinks resolved) as a workspace root.
func NewRoot(dir string) (*Root, error) { return &Root{dir: dir}, nil }

// Dir is the root's absolute, symlink-free directory.
func (r *Root) Dir() string { return r.dir }

// Resolve maps a workspace-relative slash path to an absolute path inside
// the root, refusing absolute paths, ".." escapes and symlinks that leave
// the root (every component checked).
func (r *Root) Resolve(rel string) (string, error) { return "", errTODO }

// Rel maps an absolute path inside the root to its relative slash path.
func (r *Root) Rel(abs string) (string, error) { return "", errTODO }

// ReadFile reads a file, seeing open editor documents over the disk.
func (r *Root) ReadFile(rel string) ([]byte, error) { return nil, errTODO }

// SetDocument overlays an open editor buffer's content over the disk.
func (r *Root) SetDocument(rel string, content []byte) {}

// CloseDocument drops an overlay set by SetDocument.
func (r *Root) CloseDocument(rel string) {}

// GrepOptions selects what Grep searches.
type GrepOptions struct {
	Pattern    string
	Literal    bool
	IgnoreCase bool
	Globs      []string // include globs ("!glob" excludes), matched on relative paths
	Max        int      // 0: unlimited
	Dir        string   // relative sub-directory to search, "" for the root
}

// Match is one matching line.
type Match struct {
	Path string // relative slash path
	Line int    // 1-based
	Text string // the line without its newline
}

// Grep searches the workspace on disk (documents overlaid), sorted by path
// then line.
func (r *Root) Grep(ctx context.Context, o GrepOptions) ([]Match, error) { return nil, errTODO }

// Find lists relative paths matching a ** glob, sorted, gitignore-aware.
func (r *Root) Find(ctx context.Context, glob string) ([]string, error) { return nil, errTODO }

// Op is the kind of a pending change.
type Op string

const (
	OpCreate Op = "create"
	OpModify Op = "modify"
	OpDelete Op = "delete"
)

// Change is one pending file change. A rename is a delete of From plus a
// create of Path with From set.
type Change struct {
	Path     string
	Op       Op
	From     string      // rename source, "" otherwise
	Content  []byte      // new content (nil for delete)
	Mode     fs.FileMode // permission bits of the new file
	BaseHash string      // sha256 hex of the content the change was based on, "" if the file did not exist
}

// DirEntry is one entry of ListDir.
type DirEntry struct {
	Name  string
	IsDir bool
	Size  int64
}

// ChangeSet is an overlay of pending edits over a Root. Safe for concurrent
// use.
type ChangeSet struct{ root *Root }

func NewChangeSet(r *Root) *ChangeSet                                         { return &ChangeSet{root: r} }
func (c *ChangeSet) Root() *Root                                              { return c.root }
func (c *ChangeSet) ReadFile(rel string) ([]byte, error)                      { return nil, errTODO }
func (c *ChangeSet) ListDir(rel string) ([]DirEntry, error)                   { return nil, errTODO }
func (c *ChangeSet) WriteFile(rel string, data []byte) error                  { return errTODO }
func (c *ChangeSet) Edit(rel, old, new string, replaceAll bool) (int, error)  { return 0, errTODO }
func (c *ChangeSet) ApplyPatch(patch []byte) ([]string, error)                { return nil, errTODO }
func (c *ChangeSet) Delete(rel string) error                                  { return errTODO }
func (c *ChangeSet) Rename(from, to string) error                             { return errTODO }
func (c *ChangeSet) Grep(ctx context.Context, o GrepOptions) ([]Match, error) { return nil, errTODO }
func (c *ChangeSet) Find(ctx context.Context, glob string) ([]string, error)  { return nil, errTODO }
func (c *ChangeSet) Changes() []Change                                        { return nil }
func (c *ChangeSet) Len() int                                                 { return 0 }
func (c *ChangeSet) Diff() string                                             { return "" }
func (c *ChangeSet) DiffFile(rel string) string                               { return "" }
func (c *ChangeSet) Base(rel string) ([]byte, bool)                           { return nil, false }
func (c *ChangeSet) Fingerprint() string                                      { return "" }
func (c *ChangeSet) Clone() *ChangeSet                                        { return &ChangeSet{root: c.root} }
func (c *ChangeSet) Merge(child *ChangeSet) error                             { return errTODO }
func (c *ChangeSet) Conflicts() ([]string, error)                             { return nil, errTODO }
func (c *ChangeSet) Apply() error                                             { return errTODO }
func (c *ChangeSet) Marshal() ([]byte, error)                                 { return nil, errTODO }
func UnmarshalChangeSet(r *Root, data []byte) (*ChangeSet, error)             { return nil, errTODO }
