package agent

import (
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/render"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// Review before verifying: at a root run's first finish with a change,
// the model is shown its own diff once (a stat and the hunks, bounded)
// and asked to confirm with another finish or to go on editing, so stray
// debug edits and half-done changes are caught before the checks and the
// person (SWE-agent's review on submit).

// maxReviewDiff bounds the hunks shown.
const maxReviewDiff = 12 << 10

const reviewIntro = "Before the checks run, review your change (shown once). Look for debug output, stray or partial edits, and files you did not mean to change.\n"

const reviewAsk = "If the change is right, call finish again to verify it; otherwise fix it and then call finish."

// reviewChange is the finish result that shows the diff, and true, when
// this finish is the one to review at; false otherwise (reviews off, a
// sub-agent, no change, already reviewed).
func (a *agentRun) reviewChange() (tools.Result, bool) {
	if !a.h.opts.ReviewChanges || a.parent != "" || a.st.Reviewed || a.cs.Len() == 0 || a.replaying() {
		return tools.Result{}, false
	}
	a.st.Reviewed = true
	var files []fileDiff
	for _, ch := range a.cs.Changes() {
		files = append(files, fileDiff{path: ch.Path, diff: a.cs.DiffFile(ch.Path)})
	}
	return tools.Result{Content: reviewText(files)}, true
}

// replaying reports a run that replays a cassette: its turns answer the
// results of the run it was recorded from, which had no review finish
// unless it was recorded with one (a second finish is then harmless).
func (a *agentRun) replaying() bool { return a.provider != nil && a.provider.Name() == "replay" }

// fileDiff is one file's unified diff.
type fileDiff struct{ path, diff string }

// reviewText is the intro, a --stat of the files, their hunks within
// maxReviewDiff (the files past it named), and the question.
func reviewText(files []fileDiff) string {
	var b strings.Builder
	b.WriteString(reviewIntro)
	b.WriteString("\n")
	adds, dels := 0, 0
	for _, f := range files {
		a, d := diffCounts(f.diff)
		adds, dels = adds+a, dels+d
		fmt.Fprintf(&b, " %s | %d %s%s\n", f.path, a+d, strings.Repeat("+", min(a, 40)), strings.Repeat("-", min(d, 40)))
	}
	fmt.Fprintf(&b, " %d files changed, %d insertions(+), %d deletions(-)\n\n```diff\n", len(files), adds, dels)
	left := maxReviewDiff
	for i, f := range files {
		if len(f.diff) <= left {
			b.WriteString(f.diff)
			left -= len(f.diff)
			continue
		}
		hidden := files[i:]
		if left > 512 {
			b.WriteString(cutAtLine(f.diff, left))
			fmt.Fprintf(&b, "\n… the rest of %s's diff is not shown (read_file it)\n", f.path)
			hidden = files[i+1:]
		}
		if len(hidden) > 0 {
			names := make([]string, len(hidden))
			for j, h := range hidden {
				names[j] = h.path
			}
			fmt.Fprintf(&b, "… the diffs of %d more files are not shown (read_file them): %s\n", len(hidden), render.OneLine(strings.Join(names, ", "), 400))
		}
		break
	}
	b.WriteString("```\n")
	b.WriteString(reviewAsk)
	return b.String()
}

// diffCounts counts a unified diff's added and removed lines.
func diffCounts(d string) (adds, dels int) {
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			adds++
		case strings.HasPrefix(l, "-"):
			dels++
		}
	}
	return adds, dels
}
