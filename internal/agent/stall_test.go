package agent

import (
	"fmt"
	"strings"
	"testing"
)

// Twelve failing edit_file calls whose old text differs only by trailing
// spaces (no two calls byte-identical) get the replan prompt after the
// third and stop the run after the sixth.
func TestStallOnJitteredFailingEdits(t *testing.T) {
	var ts []turn
	for i := 0; i < 12; i++ {
		ts = append(ts, say(10, "edit_file", args{"path": "a.txt", "old": "nope" + strings.Repeat(" ", i), "new": "x"}))
	}
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": ts})
	res := f.run(t, goal("edit"))
	if res.Outcome != OutcomeStalled || !strings.Contains(fmt.Sprint(res.Err), "6 edits of a.txt failed") {
		t.Fatalf("outcome %s (%v), want stalled on a.txt", res.Outcome, res.Err)
	}
	if f.prov.calls != 6 {
		t.Errorf("%d calls, want 6", f.prov.calls)
	}
	msgs := f.prov.requests()[3].Messages
	if !strings.Contains(msgs[len(msgs)-1].Text, "Your last 3 edits of a.txt failed") {
		t.Errorf("no replan prompt after the third failed edit: %q", msgs[len(msgs)-1].Text)
	}
}

// Control: failed edits with a change in between do not stall.
func TestFailedEditsWithProgressDoNotStall(t *testing.T) {
	var ts []turn
	for i := 0; i < 4; i++ {
		ts = append(ts,
			say(10, "edit_file", args{"path": "a.txt", "old": "nope", "new": "x"}),
			say(10, "edit_file", args{"path": "a.txt", "old": "nope ", "new": "x"}),
			say(10, "write_file", args{"path": "b.txt", "content": fmt.Sprint(i)}))
	}
	ts = append(ts, say(10, "finish", args{"summary": "done"}))
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": ts})
	c := goal("edit")
	c.Budget.Steps = 20
	if res := f.run(t, c); res.Outcome != OutcomeApplied {
		t.Fatalf("outcome %s (%v), want applied", res.Outcome, res.Err)
	}
}

// The same error text three turns running (calls that differ) gets the
// replan prompt; six stop the run.
func TestStallOnTheSameError(t *testing.T) {
	var ts []turn
	for i := 0; i < 10; i++ {
		ts = append(ts, say(10, "run", args{"argv": []string{"/bin/sh", "-c", "echo same failure; exit 1", fmt.Sprint(i)}}))
	}
	f := newFixture(t, nil, map[string][]turn{"": ts})
	res := f.run(t, goal("run"))
	if res.Outcome != OutcomeStalled || !strings.Contains(fmt.Sprint(res.Err), "the same error came back 6 times") {
		t.Fatalf("outcome %s (%v), want stalled on the error", res.Outcome, res.Err)
	}
	msgs := f.prov.requests()[3].Messages
	if !strings.Contains(msgs[len(msgs)-1].Text, "The same error has come back 3 times") {
		t.Errorf("no replan prompt after the third error: %q", msgs[len(msgs)-1].Text)
	}
}

// Fifteen read-only steps running get a prompt to act; fourteen do not.
func TestReadOnlyStepsNudge(t *testing.T) {
	files := map[string]string{}
	var ts []turn
	for i := 0; i < 16; i++ {
		p := fmt.Sprintf("f%02d.txt", i)
		files[p] = p
		ts = append(ts, say(10, "read_file", args{"path": p}))
	}
	ts = append(ts, say(10, "finish", args{"summary": "done"}))
	f := newFixture(t, files, map[string][]turn{"": ts})
	c := goal("read")
	c.Budget.Steps = 20
	f.run(t, c)
	reqs := f.prov.requests()
	last := func(i int) string { m := reqs[i].Messages; return m[len(m)-1].Text }
	if strings.Contains(last(14), "read-only steps") {
		t.Errorf("nudged after 14 read-only steps")
	}
	if !strings.Contains(last(15), "You have made 15 read-only steps in a row without an edit") {
		t.Errorf("no nudge after 15 read-only steps: %q", last(15))
	}
}
