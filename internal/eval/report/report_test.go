package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/stats"
)

func sample() []result.Cell {
	c := func(task, v string, ok bool, cost float64) result.Cell {
		return result.Cell{Task: task, Variant: v, Repeat: 1, Verified: ok, CostUSD: cost, Outcome: "verified",
			Tokens: result.Tokens{Total: 1000}, Steps: 3, WallMS: 1500, VerifyRounds: 1}
	}
	return []result.Cell{
		c("t1", "fix", true, 0.02), c("t2", "fix", true, 0.02), c("t3", "fix", false, 0.04),
		c("t1", "giveup", false, 0.01), c("t2", "giveup", false, 0.01), c("t3", "giveup", false, 0.01),
	}
}

func TestMarkdown(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, stats.Summarise(sample(), nil), Options{Title: "T"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"# T\n\n3 tasks, 2 variants.",
		// 2 of 3: Wilson 20.8%–93.9%; cost 0.08/3 a task, 0.04/2 a solved one.
		"| fix | 3 | 2 | 66.7% | 20.8%–93.9% | $0.0267 | $0.0200 | 1000 | 1000 | 3.0 | 0 | 3 | 1.50s |",
		"| giveup | 3 | 0 | 0.0% | 0.0%–56.1% | $0.0100 | $0.0000 |",
		"| fix | giveup | 3 | 0 | 2 | 0 | 1 | 0.5000 |",
		"| t3 | 0/1 | 0/1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	b.Reset()
	Markdown(&b, stats.Summarise(sample(), nil), Options{NoTiming: true})
	if strings.Contains(b.String(), "wall") || strings.Contains(b.String(), "1.50s") {
		t.Errorf("NoTiming report shows wall times:\n%s", b.String())
	}
}

// TestHTMLSelfContained: the page loads nothing from elsewhere.
func TestHTMLSelfContained(t *testing.T) {
	var b strings.Builder
	if err := HTML(&b, stats.Summarise(sample(), nil), Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<link", "<img", "src=", "href=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if n := strings.Count(page, `class="bar"`); n != 2 {
		t.Errorf("%d bars, want 2", n)
	}
}

// TestHTMLInBrowser renders the report in a real browser (Debian's
// chromium, headless) and checks the DOM it built: both charts, a bar
// and a point per variant with the bar heights in proportion, the
// tables.
func TestHTMLInBrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium): the HTML report is only checked without a browser")
	}
	dir := t.TempDir()
	if _, err := Write(dir, sample(), Options{Title: "Browser check"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+filepath.Join(dir, HTMLFile))
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	dom := string(out)
	if !strings.Contains(dom, "<title>Browser check</title>") || !strings.Contains(dom, `id="pass-chart"`) || !strings.Contains(dom, `id="cost-chart"`) {
		t.Fatalf("the browser's DOM lacks the title or the charts:\n%.2000s", dom)
	}
	// The browser parsed the SVG: its elements are in the DOM with
	// their attributes, in the SVG namespace's lower case.
	bars := regexp.MustCompile(`<rect class="bar" data-variant="([a-z]+)" x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)"`).FindAllStringSubmatch(dom, -1)
	if len(bars) != 2 || bars[0][1] != "fix" || bars[1][1] != "giveup" {
		t.Fatalf("bars in the DOM: %v", bars)
	}
	// fix's bar is 2/3 of the plot height (230 px), giveup's is 0.
	if bars[0][3] != "153.3" || bars[1][3] != "0.0" {
		t.Errorf("bar heights %s and %s, want 153.3 and 0.0", bars[0][3], bars[1][3])
	}
	if n := strings.Count(dom, `class="point"`); n != 2 {
		t.Errorf("%d points in the cost chart, want 2", n)
	}
	if !strings.Contains(dom, `<table id="pairs">`) || !strings.Contains(dom, "<td>0.5000</td>") {
		t.Errorf("the pairs table is missing from the DOM")
	}
}
