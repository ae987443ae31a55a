// Package report renders an evaluation's summary: Markdown for the
// terminal and a self-contained HTML page (inline SVG charts, no external
// asset). Both are deterministic: the same cells give the same bytes.
package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/stats"
)

// Options choose what a report shows.
type Options struct {
	Title string
	// NoTiming leaves out wall times, the one figure that differs between
	// two runs of the same replayed suite (a sharded run and an unsharded
	// one give the same bytes then).
	NoTiming bool
}

// Markdown writes the summary as Markdown tables.
func Markdown(w io.Writer, s stats.Summary, o Options) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title(o))
	fmt.Fprintf(&b, "%s.\n\n", counts(s))
	b.WriteString("| variant | cells | verified | pass@1 | 95% CI | cost/task | cost/solved | tokens/task | tokens/solved | steps/task | failed edits | verify rounds |")
	if !o.NoTiming {
		b.WriteString(" wall/task |")
	}
	b.WriteString("\n|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	if !o.NoTiming {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, v := range s.Variants {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s–%s | %s | %s | %.0f | %.0f | %.1f | %d | %d |",
			v.Name, v.Cells, v.Passed, pct(v.Pass), pct(v.Lo), pct(v.Hi), usd(v.CostPerTask, v.Unpriced),
			usd(v.CostPerSolved, v.Unpriced), v.TokensPerTask, v.TokensPerSolved, v.StepsPerTask, v.FailedEdits, v.VerifyRounds)
		if !o.NoTiming {
			fmt.Fprintf(&b, " %.2fs |", v.WallMSPerTask/1000)
		}
		b.WriteString("\n")
	}
	for _, v := range s.Variants {
		if v.Errors > 0 {
			fmt.Fprintf(&b, "\n%s: %d cells could not run (outcome `error`; results.jsonl says why).\n", v.Name, v.Errors)
		}
	}
	if len(s.Pairs) > 0 {
		b.WriteString("\n## Paired comparison (exact McNemar)\n\n| A | B | pairs | both | only A | only B | neither | p |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
		for _, p := range s.Pairs {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %s |\n", p.A, p.B, p.Pairs, p.Both, p.OnlyA, p.OnlyB, p.Neither, pval(p.P))
		}
	}
	b.WriteString("\n## Per task (verified/run)\n\n| task |")
	for _, v := range s.Variants {
		b.WriteString(" " + v.Name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(s.Variants)) + "\n")
	for _, t := range s.Tasks {
		b.WriteString("| " + t + " |")
		for _, v := range s.Variants {
			pt, ok := s.PerTask[t][v.Name]
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %d/%d |", pt[0], pt[1])
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// counts is "3 tasks, 1 variant".
func counts(s stats.Summary) string {
	n := func(k int, noun string) string {
		if k == 1 {
			return "1 " + noun
		}
		return fmt.Sprintf("%d %ss", k, noun)
	}
	return n(len(s.Tasks), "task") + ", " + n(len(s.Variants), "variant")
}

func title(o Options) string {
	if o.Title == "" {
		return "Evaluation"
	}
	return o.Title
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func usd(f float64, lowerBound bool) string {
	s := fmt.Sprintf("$%.4f", f)
	if lowerBound {
		s = "≥" + s
	}
	return s
}

func pval(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return fmt.Sprintf("%.4f", p)
}

// Files are the report files Write makes in an output directory.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// Write renders cells into dir's report.md and report.html and returns
// the Markdown.
func Write(dir string, cells []result.Cell, o Options) (string, error) {
	s := stats.Summarise(cells, nil)
	var md, page strings.Builder
	if err := Markdown(&md, s, o); err != nil {
		return "", err
	}
	if err := HTML(&page, s, o); err != nil {
		return "", err
	}
	for name, text := range map[string]string{MarkdownFile: md.String(), HTMLFile: page.String()} {
		if err := writeAtomic(filepath.Join(dir, name), text); err != nil {
			return "", err
		}
	}
	return md.String(), nil
}

// writeAtomic replaces path with text through a temporary file.
func writeAtomic(path, text string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
