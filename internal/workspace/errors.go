package workspace

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Callers test them with errors.Is; the concrete errors
// below carry the path or counts.
var (
	// ErrAbsolute: a workspace path was absolute.
	ErrAbsolute = errors.New("absolute path not allowed")
	// ErrEscape: a path climbs out of the root with "..".
	ErrEscape = errors.New("path escapes the workspace")
	// ErrSymlinkEscape: a symlink on the path resolves outside the root.
	ErrSymlinkEscape = errors.New("symlink resolves outside the workspace")
	// ErrInvalidPath: empty components, NUL bytes, or too many symlinks.
	ErrInvalidPath = errors.New("invalid path")
	// ErrNoMatch: Edit found no occurrence of the old text.
	ErrNoMatch = errors.New("old text not found")
	// ErrAmbiguous: Edit found the old text more than once without replaceAll.
	ErrAmbiguous = errors.New("old text found more than once")
	// ErrConflict: the workspace changed under a pending change.
	ErrConflict = errors.New("workspace changed under the change set")
	// ErrIsDir: a file operation named a directory.
	ErrIsDir = errors.New("is a directory")
)

// PathError reports a path refused by the root's confinement.
type PathError struct {
	Path string
	Err  error // one of ErrAbsolute, ErrEscape, ErrSymlinkEscape, ErrInvalidPath
}

func (e *PathError) Error() string { return fmt.Sprintf("resolve %q: %v", e.Path, e.Err) }
func (e *PathError) Unwrap() error { return e.Err }

// MatchError reports an Edit whose old text matched zero or several times.
type MatchError struct {
	Path  string
	Count int   // occurrences found
	Lines []int // 0-based first line of each occurrence listed
	Err   error // ErrNoMatch or ErrAmbiguous
	// Detail is what to recover with, for the model: each occurrence
	// with the line before it, or the closest lines of the file.
	Detail string
}

func (e *MatchError) Error() string {
	msg := fmt.Sprintf("edit %s: %v", e.Path, e.Err)
	if e.Detail != "" {
		msg += "\n" + e.Detail
	}
	return msg
}
func (e *MatchError) Unwrap() error { return e.Err }

// ConflictError names the files whose state on disk no longer matches the
// base a change was made against (Apply), or that two change sets changed
// differently (Merge).
type ConflictError struct {
	Files []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict on %s: %v", strings.Join(e.Files, ", "), ErrConflict)
}
func (e *ConflictError) Unwrap() error { return ErrConflict }

// PatchError reports a patch that does not apply.
type PatchError struct {
	File string
	Hunk int // 1-based, 0 when the error is not about one hunk
	Err  error
	// Detail shows a failing hunk's expected lines beside the file's
	// closest lines.
	Detail string
}

func (e *PatchError) Error() string {
	msg := fmt.Sprintf("patch %s: %v", e.File, e.Err)
	if e.Hunk > 0 {
		msg = fmt.Sprintf("patch %s hunk %d: %v", e.File, e.Hunk, e.Err)
	}
	if e.Detail != "" {
		msg += "\n" + e.Detail
	}
	return msg
}
func (e *PatchError) Unwrap() error { return e.Err }
