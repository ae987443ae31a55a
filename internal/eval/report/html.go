package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/stats"
)

// HTML writes a self-contained page: the Markdown's tables, a chart of
// pass@1 with its interval per variant (id "pass-chart") and one of cost
// per task against pass@1 (id "cost-chart"). Nothing is loaded from
// elsewhere: no script, no stylesheet link, no image.
func HTML(w io.Writer, s stats.Summary, o Options) error {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n", esc(title(o)))
	b.WriteString("<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}" +
		"td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}" +
		"svg text{font:12px system-ui,sans-serif}</style></head><body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s.</p>\n", esc(title(o)), counts(s))
	b.WriteString("<h2>Pass@1 with 95% Wilson intervals</h2>\n")
	passChart(&b, s)
	b.WriteString("<h2>Cost per task against pass@1</h2>\n")
	costChart(&b, s)
	b.WriteString("<h2>Variants</h2>\n<table id=\"variants\"><tr><th>variant</th><th>cells</th><th>verified</th><th>pass@1</th><th>95% CI</th><th>cost/task</th><th>cost/solved</th><th>tokens/task</th><th>tokens/solved</th><th>steps/task</th><th>failed edits</th><th>verify rounds</th>")
	if !o.NoTiming {
		b.WriteString("<th>wall/task</th>")
	}
	b.WriteString("</tr>\n")
	for _, v := range s.Variants {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s–%s</td><td>%s</td><td>%s</td><td>%.0f</td><td>%.0f</td><td>%.1f</td><td>%d</td><td>%d</td>",
			esc(v.Name), v.Cells, v.Passed, pct(v.Pass), pct(v.Lo), pct(v.Hi), esc(usd(v.CostPerTask, v.Unpriced)),
			esc(usd(v.CostPerSolved, v.Unpriced)), v.TokensPerTask, v.TokensPerSolved, v.StepsPerTask, v.FailedEdits, v.VerifyRounds)
		if !o.NoTiming {
			fmt.Fprintf(&b, "<td>%.2fs</td>", v.WallMSPerTask/1000)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	if len(s.Pairs) > 0 {
		b.WriteString("<h2>Paired comparison (exact McNemar)</h2>\n<table id=\"pairs\"><tr><th>A</th><th>B</th><th>pairs</th><th>both</th><th>only A</th><th>only B</th><th>neither</th><th>p</th></tr>\n")
		for _, p := range s.Pairs {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td></tr>\n",
				esc(p.A), esc(p.B), p.Pairs, p.Both, p.OnlyA, p.OnlyB, p.Neither, pval(p.P))
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("<h2>Per task (verified/run)</h2>\n<table id=\"tasks\"><tr><th>task</th>")
	for _, v := range s.Variants {
		fmt.Fprintf(&b, "<th>%s</th>", esc(v.Name))
	}
	b.WriteString("</tr>\n")
	for _, t := range s.Tasks {
		fmt.Fprintf(&b, "<tr><td>%s</td>", esc(t))
		for _, v := range s.Variants {
			if pt, ok := s.PerTask[t][v.Name]; ok {
				fmt.Fprintf(&b, "<td>%d/%d</td>", pt[0], pt[1])
			} else {
				b.WriteString("<td>–</td>")
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

const (
	chartW, chartH = 640, 300
	padL, padR     = 60, 20
	padT, padB     = 20, 50
)

// passChart draws one bar per variant with its interval as a whisker.
func passChart(b *strings.Builder, s stats.Summary) {
	fmt.Fprintf(b, "<svg id=\"pass-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"pass@1 per variant\">\n", chartW, chartH, chartW, chartH)
	axes(b, "pass@1")
	n := len(s.Variants)
	if n == 0 {
		b.WriteString("</svg>\n")
		return
	}
	slot := float64(chartW-padL-padR) / float64(n)
	bw := math.Min(60, slot*0.6)
	for i, v := range s.Variants {
		x := float64(padL) + slot*(float64(i)+0.5)
		top := y(v.Pass)
		fmt.Fprintf(b, "<rect class=\"bar\" data-variant=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s: %s (%s–%s)</title></rect>\n",
			html.EscapeString(v.Name), x-bw/2, top, bw, y(0)-top, colour(i), html.EscapeString(v.Name), pct(v.Pass), pct(v.Lo), pct(v.Hi))
		fmt.Fprintf(b, "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>", x, y(v.Lo), x, y(v.Hi))
		for _, f := range []float64{v.Lo, v.Hi} {
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>", x-6, y(f), x+6, y(f))
		}
		fmt.Fprintf(b, "\n<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, chartH-padB+18, html.EscapeString(v.Name))
	}
	b.WriteString("</svg>\n")
}

// costChart places each variant at (cost per task, pass@1).
func costChart(b *strings.Builder, s stats.Summary) {
	fmt.Fprintf(b, "<svg id=\"cost-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"cost per task against pass@1\">\n", chartW, chartH, chartW, chartH)
	axes(b, "pass@1")
	maxCost := 0.0
	for _, v := range s.Variants {
		maxCost = math.Max(maxCost, v.CostPerTask)
	}
	if maxCost == 0 {
		maxCost = 1 // every run free (replay): all points at the left edge
	}
	maxCost *= 1.1
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">cost per task (USD)</text>\n", (padL+chartW-padR)/2, chartH-8)
	width := float64(chartW - padL - padR)
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		x := float64(padL) + width*f
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">$%.4f</text>\n",
			x, y(0), x, y(0)+5, x, y(0)+18, f*maxCost)
	}
	for i, v := range s.Variants {
		x := float64(padL) + width*v.CostPerTask/maxCost
		fmt.Fprintf(b, "<circle class=\"point\" data-variant=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"><title>%s: %s at %s a task</title></circle>",
			html.EscapeString(v.Name), x, y(v.Pass), colour(i), html.EscapeString(v.Name), pct(v.Pass), usd(v.CostPerTask, v.Unpriced))
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x+9, y(v.Pass)+4, html.EscapeString(v.Name))
	}
	b.WriteString("</svg>\n")
}

// axes draws the y axis from 0 to 100% with grid lines.
func axes(b *strings.Builder, label string) {
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f%%</text>\n",
			padL, y(f), chartW-padR, y(f), padL-6, y(f)+4, 100*f)
	}
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\"/><line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000\"/>\n",
		padL, padT, padL, y(0), padL, y(0), chartW-padR, y(0))
	fmt.Fprintf(b, "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" text-anchor=\"middle\">%s</text>\n", (padT+chartH-padB)/2, (padT+chartH-padB)/2, label)
}

// y maps a fraction to the chart's vertical coordinate.
func y(f float64) float64 { return float64(padT) + (1-f)*float64(chartH-padT-padB) }

var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"}

func colour(i int) string { return palette[i%len(palette)] }
