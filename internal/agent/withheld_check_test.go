//go:build linux

package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
)

// TestCheckOutputRedactsWithheldFiles goes through the real harness and
// the real sandbox with a scripted model. The contract's check is a test
// the model wrote that prints .env and notes.txt: it fails, then passes.
// The checks read the real .env (their verdict must be the user's
// machine's), but what they print of it reaches neither the model's next
// request (the red summary, the failure feedback) nor the stored trace:
// there it is "[withheld: .env]". Controls: notes.txt, which the policy
// lets the model read, reaches the model unchanged; and with an allow rule
// for reading .env in this run, .env's value reaches it too. The same
// attack as a Go test carries the value in its failure's own output and
// location messages (per-test evidence), and in a subtest's name.
func TestCheckOutputRedactsWithheldFiles(t *testing.T) {
	const secret, plain = "SECRET_VALUE_123", "PLAIN_NOTES_456"
	files := map[string]string{
		".env":      "# local\nexport API_KEY=" + secret + "\nDEBUG=1\n",
		"notes.txt": plain + "\n",
		// the test as the model left it in an earlier run: it fails until
		// the file "fixed" exists
		"leak_test.sh": "cat .env notes.txt\necho \"key: $(grep API_KEY .env)\"\ntest -f fixed\n",
	}
	// the same as a Go test: its failure's own output and location
	// messages carry the value (per-test evidence, test2json)
	goFiles := map[string]string{
		".env":      files[".env"],
		"notes.txt": files["notes.txt"],
		"go.mod":    "module example.com/leak\n\ngo 1.21\n",
		// TestLeak prints both files; its subtest is named after the value
		"leak_test.go": `package leak

import (
	"os"
	"strings"
	"testing"
)

func TestLeak(t *testing.T) {
	env, _ := os.ReadFile(".env")
	notes, _ := os.ReadFile("notes.txt")
	_, err := os.Stat("fixed")
	_, key, _ := strings.Cut(strings.Split(string(env), "\n")[1], "=")
	t.Run(key, func(t *testing.T) {
		if err != nil {
			t.Fatal("not fixed")
		}
	})
	if err != nil {
		t.Fatalf("env %s notes %s", env, notes)
	}
}
`,
	}
	sb, err := sandboxexec.New(sandboxexec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	allowEnv := policy.LayerRules{Layer: policy.LayerRemembered, Rules: []policy.Rule{{Act: policy.ActRead, Effect: policy.Allow, Pattern: ".env"}}}
	shCheck := contract.Check{Name: "leak", Shell: "sh leak_test.sh"}
	goCheck := contract.Check{Name: "leak", Run: []string{"go", "test", "./..."}}
	for _, c := range []struct {
		name   string
		files  map[string]string
		check  contract.Check
		layers []policy.LayerRules
		hidden bool
	}{
		{"built-in asks about .env", files, shCheck, nil, true},
		{".env allowed for this run (a remembered answer)", files, shCheck, []policy.LayerRules{allowEnv}, false},
		{"go test: built-in asks about .env", goFiles, goCheck, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.files, map[string][]turn{"": {
				say(10, "write_file", args{"path": "other", "content": "x"}, "finish", args{"summary": "not yet"}),
				say(10, "write_file", args{"path": "fixed", "content": "x"}, "finish", args{"summary": "fixed"}),
			}})
			h, err := New(Options{
				Root: f.root, Store: f.store, Approver: f.appr, Events: f.sink, Sandbox: sb, Layers: c.layers,
				Providers: f.h.opts.Providers,
			})
			if err != nil {
				t.Fatal(err)
			}
			f.h = h
			ct := goal("fix the leak test")
			ct.Verify = contract.Verify{RedGreen: true, Checks: []contract.Check{c.check}}
			res := f.run(t, ct)
			if res.Outcome != OutcomeApplied {
				t.Fatalf("outcome %s (%v), want applied: the check passes once fixed exists", res.Outcome, res.Err)
			}
			reqs := f.prov.requests()
			if len(reqs) < 2 {
				t.Fatalf("%d requests, want the first and the one after the failed finish", len(reqs))
			}
			first, next := requestText(reqs[0]), requestText(reqs[1])
			if !strings.Contains(next, "verification failed") && !strings.Contains(next, "leak") {
				t.Fatalf("the request after the failed finish has no check feedback:\n%s", next)
			}
			events, err := f.store.Events(context.Background(), res.RunID)
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := json.Marshal(events)
			for name, text := range map[string]string{"first request (red summary)": first, "request after the failed finish": next, "trace": string(stored)} {
				if !strings.Contains(text, plain) {
					t.Errorf("%s: the readable notes.txt (%s) did not reach it:\n%s", name, plain, text)
				}
				switch {
				case c.hidden && strings.Contains(text, secret[:8]):
					t.Errorf("%s holds the withheld .env value (or a piece of it):\n%s", name, text)
				case c.hidden && !strings.Contains(text, "[withheld: .env]"):
					t.Errorf("%s does not say [withheld: .env]:\n%s", name, text)
				case !c.hidden && !strings.Contains(text, secret):
					t.Errorf("%s: with .env allowed its value %s should reach it:\n%s", name, secret, text)
				}
			}
		})
	}
}

// requestText is every message of a request, tool results included.
func requestText(r interface{}) string {
	b, _ := json.Marshal(r)
	return string(b)
}
