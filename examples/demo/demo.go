// Package demo bundles the example project and replay cassette that
// `ioh-lsp demo` runs: a tiny Go module with a real failing test, and a
// recorded agent session that fixes it in three turns. The project's files
// are stored with a ".txt" suffix so that the Go tool neither builds them
// as part of this module nor treats the embedded go.mod as a module
// boundary; Extract strips it.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed project cassette.json
var files embed.FS

// FS is the embedded example: project/ (files suffixed ".txt") and
// cassette.json.
func FS() fs.FS { return files }

// Layout is where Extract put things.
type Layout struct {
	Project  string // the example module's root
	Cassette string // the replay cassette
	// File is the source file with the bug and Test its failing test,
	// both relative to Project.
	File string
	Test string
}

// Extract copies the example into dir (which must exist).
func Extract(dir string) (Layout, error) {
	l := Layout{
		Project:  filepath.Join(dir, "stats"),
		Cassette: filepath.Join(dir, "cassette.json"),
		File:     "stats.go",
		Test:     "stats_test.go",
	}
	err := fs.WalkDir(files, "project", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "project"), "/")
		dst := filepath.Join(l.Project, filepath.FromSlash(strings.TrimSuffix(rel, ".txt")))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return Layout{}, fmt.Errorf("extract example: %w", err)
	}
	data, err := files.ReadFile("cassette.json")
	if err != nil {
		return Layout{}, fmt.Errorf("extract cassette: %w", err)
	}
	if err := os.WriteFile(l.Cassette, data, 0o644); err != nil {
		return Layout{}, fmt.Errorf("extract cassette: %w", err)
	}
	return l, nil
}
