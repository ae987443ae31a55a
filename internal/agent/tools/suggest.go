package tools

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// maxSuggest caps the paths a "did you mean" names.
const maxSuggest = 3

// didYouMean names workspace files the model may read whose name is
// rel's base name (or, failing that, its stem with another extension):
// the likely file behind a wrong path. "" when none is.
func didYouMean(ctx context.Context, cs *workspace.ChangeSet, reads ReadCheck, rel string) string {
	base := path.Base(strings.TrimSuffix(rel, "/"))
	if base == "." || base == "/" || base == "" || strings.ContainsAny(base, "*?[{\\") {
		return ""
	}
	globs := []string{"**/" + base}
	if ext := path.Ext(base); ext != "" && ext != base {
		globs = append(globs, "**/"+strings.TrimSuffix(base, ext)+".*")
	}
	f := newReadFilter(cs, reads)
	for _, g := range globs {
		paths, err := cs.Find(ctx, g)
		if err != nil {
			continue
		}
		var ok []string
		for _, p := range paths {
			if p != rel && f.allow(p) {
				ok = append(ok, p)
			}
		}
		if len(ok) > 0 {
			more := ""
			if len(ok) > maxSuggest {
				more = ", …"
				ok = ok[:maxSuggest]
			}
			return "did you mean " + strings.Join(ok, ", ") + more + "?"
		}
	}
	return ""
}

// failed is the error result for a workspace error: host paths replaced
// by workspace ones, and for a missing file a "did you mean".
func failed(ctx context.Context, cs *workspace.ChangeSet, reads ReadCheck, rel string, err error) Result {
	if errors.Is(err, workspace.ErrIsDir) {
		return Result{Content: rel + " is a directory, not a file; list_dir shows what it holds", IsError: true}
	}
	msg := hostless(cs, err.Error())
	if errors.Is(err, fs.ErrNotExist) || strings.Contains(msg, "does not exist") {
		if s := didYouMean(ctx, cs, reads, rel); s != "" {
			msg += "; " + s
		}
	}
	return Result{Content: msg, IsError: true}
}

// hostless replaces the workspace's host directory in msg by ".": the
// model sees workspace paths only.
func hostless(cs *workspace.ChangeSet, msg string) string {
	dir := cs.Root().Dir()
	msg = strings.ReplaceAll(msg, dir+"/", "")
	return strings.ReplaceAll(msg, dir, ".")
}
