package agent

import (
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
)

// With reviews on, the first finish shows the model its diff (stat and
// hunks) and runs no check; the second verifies and applies. A finish
// without a change is not reviewed (control).
func TestFinishShowsTheDiffOnce(t *testing.T) {
	f := newFixture(t, map[string]string{"n.txt": "1\n"}, map[string][]turn{"": {
		say(10, "write_file", args{"path": "n.txt", "content": "2\n"}),
		say(10, "finish", args{"summary": "first"}),
		say(10, "finish", args{"summary": "confirmed"}),
	}})
	f.h.opts.ReviewChanges = true
	c := goal("make it 2")
	c.Verify.Checks = []contract.Check{{Name: "two", Shell: "grep -qx 2 n.txt"}}
	res := f.run(t, c)
	if res.Outcome != OutcomeApplied || res.Summary != "confirmed" {
		t.Fatalf("outcome %s (%v), summary %q", res.Outcome, res.Err, res.Summary)
	}
	reqs := f.prov.requests()
	review := reqs[2].Messages[len(reqs[2].Messages)-1].ToolResults[0]
	for _, want := range []string{"review your change", " n.txt | 2 +-", "1 files changed, 1 insertions(+), 1 deletions(-)", "-1\n+2\n", "call finish again"} {
		if !strings.Contains(review.Content, want) || review.IsError {
			t.Errorf("review result lacks %q:\n%s", want, review.Content)
		}
	}
	checks := 0
	for _, e := range f.sink.ev {
		if e.Type == "verification" && e.Step <= 2 {
			checks++
		}
	}
	if checks != 0 {
		t.Errorf("%d verification events at the reviewed finish, want none", checks)
	}

	f2 := newFixture(t, nil, map[string][]turn{"": {say(10, "finish", args{"summary": "nothing to do"})}})
	f2.h.opts.ReviewChanges = true
	if res := f2.run(t, goal("nothing")); res.Outcome == OutcomeProviderFailed {
		t.Errorf("control: a finish without a change was held for review: %s (%v)", res.Outcome, res.Err)
	}
}

func TestReviewTextIsBounded(t *testing.T) {
	var files []fileDiff
	for i := 0; i < 10; i++ {
		files = append(files, fileDiff{path: "f" + string(rune('a'+i)) + ".go", diff: strings.Repeat("+line of added code\n", 200)})
	}
	got := reviewText(files)
	if len(got) > maxReviewDiff+2048 {
		t.Errorf("review text %d bytes, want ≤ %d", len(got), maxReviewDiff+2048)
	}
	if !strings.Contains(got, "more files are not shown (read_file them)") || !strings.Contains(got, " fj.go | 200 ") {
		t.Errorf("the cut does not name the files left out or the stat lacks one:\n%s", got[len(got)-600:])
	}
}
