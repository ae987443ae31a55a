package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/trace"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// envSandbox stands in for a sandboxed command that prints a variable
// passed through to it (as `go env GOPROXY` would).
type envSandbox struct{ out string }

func (s envSandbox) Exec(context.Context, *contain.Request) (*contain.Result, error) {
	return &contain.Result{Output: []byte(s.out), Backend: "test-env", Duration: time.Millisecond}, nil
}

// encodings returns the spellings of secret to look for in stored bytes:
// raw, JSON-escaped, hex and base64 (standard and URL alphabets, at each
// of the three alignments, the bytes that depend on the secret alone).
func encodings(secret string) map[string]string {
	out := map[string]string{"raw": secret, "hex": hex.EncodeToString([]byte(secret)), "HEX": strings.ToUpper(hex.EncodeToString([]byte(secret)))}
	j, _ := json.Marshal(secret)
	out["json"] = string(j[1 : len(j)-1])
	for pad := range 3 {
		for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.URLEncoding} {
			s := enc.EncodeToString(append(bytes.Repeat([]byte{'x'}, pad), secret...))
			out[name+string(rune('0'+pad))] = s[4 : len(s)-4]
		}
	}
	return out
}

// leaks lists every file under dir that holds secret in any encoding.
func leaks(t *testing.T, dir string, secrets ...string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			for name, enc := range encodings(s) {
				if bytes.Contains(b, []byte(enc)) {
					found = append(found, filepath.Base(p)+": "+name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// A workspace file holding the API key is edited by a replayed agent and
// a sandboxed command prints a proxy URL with a token: nothing under the
// state directory (database, WAL, shared memory, any other file) holds
// either secret in any encoding, while the same run without the
// redaction's placeholders would (the control: the plain Marshal of the
// change set holds the key). Resume restores the file exactly from the
// environment, and fails clearly when the variable is gone.
func TestSecretsNeverReachTheStateDir(t *testing.T) {
	key := "sk-ant-test-" + randomHex(t, 20)
	token := "tok" + randomHex(t, 12)
	t.Setenv("IOH_TEST_API_KEY", key)
	t.Setenv("GOPROXY", "https://user:"+token+"@proxy.example/mod,direct")
	secrets := []string{key, token}

	dir := t.TempDir()
	orig := "package app\n\nconst apiKey = \"" + key + "\"\n\nconst port = 80\n"
	if err := os.MkdirAll(filepath.Join(dir, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app", "config.go"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	stateDir := t.TempDir()
	store, err := trace.Open(context.Background(), filepath.Join(stateDir, "ws.db"), secrets)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prov := &script{turns: map[string][]turn{"": {
		say(10, "edit_file", args{"path": "app/config.go", "old": "port = 80", "new": "port = 81"},
			"run", args{"argv": []string{"go", "env", "GOPROXY"}}),
		{fn: func(*model.Request) (*model.Response, error) { cancel(); return nil, context.Canceled }},
		say(10, "finish", args{"summary": "port changed"}),
	}}}
	harness := func() *Harness {
		h, err := New(Options{
			Root: root, Store: store, Sandbox: envSandbox{out: "https://user:" + token + "@proxy.example/mod\n"},
			Approver:  &approver{act: Decision{Answer: AllowOnce}, change: Decision{Answer: AllowOnce}},
			Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return prov, nil },
			Secrets:   secrets,
		})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	r, err := harness().Start(ctx, goal("change the port"))
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Wait(); res.Outcome != OutcomeCancelled || res.Steps != 1 {
		t.Fatalf("first run: %s after %d steps (%v)", res.Outcome, res.Steps, res.Err)
	}
	if err := store.SetOutcome(context.Background(), r.ID(), string(OutcomeRunning), "", "", nil); err != nil {
		t.Fatal(err)
	}
	row, err := store.Run(context.Background(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(row.Changes) == 0 {
		t.Fatal("the edit's change set was not stored")
	}
	// Control: the unsealed snapshot of the same change set holds the key,
	// so the scan below can see it.
	plain, err := workspace.UnmarshalSealed(root, row.Changes, harness().sealer())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := plain.Marshal()
	if !bytes.Contains(raw, []byte(encodings(key)["base64"+"0"])) && !bytes.Contains(raw, []byte(encodings(key)["base64"+"1"])) && !bytes.Contains(raw, []byte(encodings(key)["base64"+"2"])) {
		t.Fatal("control: an unsealed snapshot does not show the key in base64; the scan proves nothing")
	}
	if got := leaks(t, stateDir, secrets...); len(got) > 0 {
		t.Errorf("secrets under the state directory after the first run: %v", got)
	}

	// Resume with the key gone: a clear error, nothing applied.
	os.Unsetenv("IOH_TEST_API_KEY")
	if _, err := harness().Resume(context.Background(), r.ID()); err == nil || !strings.Contains(err.Error(), "$IOH_TEST_API_KEY") {
		t.Fatalf("resume without the variable: %v, want an error naming $IOH_TEST_API_KEY", err)
	}
	t.Setenv("IOH_TEST_API_KEY", key)
	prov.turns[""][1] = say(10, "read_file", args{"path": "app/config.go"})
	r2, err := harness().Resume(context.Background(), r.ID())
	if err != nil {
		t.Fatal(err)
	}
	res := r2.Wait()
	if res.Outcome != OutcomeApplied {
		t.Fatalf("resumed: %s (%v)", res.Outcome, res.Err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "app", "config.go"))
	if want := strings.Replace(orig, "port = 80", "port = 81", 1); string(got) != want {
		t.Errorf("restored file:\n%s\nwant:\n%s", got, want)
	}
	if got := leaks(t, stateDir, secrets...); len(got) > 0 {
		t.Errorf("secrets under the state directory after resume: %v", got)
	}
	store.Close()
	if got := leaks(t, stateDir, secrets...); len(got) > 0 {
		t.Errorf("secrets under the state directory after close: %v", got)
	}
}

func TestSealerRoundTrip(t *testing.T) {
	t.Setenv("IOH_SEAL_TOKEN", "abcdefgh12345678")
	t.Setenv("IOH_SEAL_URL", "https://u:pw-0123456789@h/x https://v:zz-9876543210@h2")
	h := &Harness{}
	s := h.sealer()
	for _, in := range []string{
		"",
		"nothing secret",
		"abcdefgh12345678",
		"a=abcdefgh12345678 b=abcdefgh12345678\n",
		"${IOH_SECRET:IOH_SEAL_TOKEN} is literal text, abcdefgh12345678 is not",
		"url pw-0123456789 and zz-9876543210.",
	} {
		sealed, holes := s.Seal([]byte(in))
		for _, v := range []string{"abcdefgh12345678", "pw-0123456789", "zz-9876543210"} {
			if bytes.Contains(sealed, []byte(v)) {
				t.Errorf("Seal(%q) = %q keeps %s", in, sealed, v)
			}
		}
		back, err := s.Open(sealed, holes)
		if err != nil || string(back) != in {
			t.Errorf("Open(Seal(%q)) = %q, %v", in, back, err)
		}
	}
	sealed, holes := s.Seal([]byte("k=abcdefgh12345678"))
	os.Unsetenv("IOH_SEAL_TOKEN")
	if _, err := s.Open(sealed, holes); err == nil || !strings.Contains(err.Error(), "$IOH_SEAL_TOKEN") {
		t.Errorf("open without the variable: %v", err)
	}
	if _, err := s.Open([]byte("tampered"), holes); err == nil {
		t.Error("open of content without its placeholder: want an error")
	}
}

// A key pasted into a goal does not reach the prompt (docs/trace.md); the rest
// of the goal does (control).
func TestGoalSecretNeverReachesThePrompt(t *testing.T) {
	key := "sk-goal-" + randomHex(t, 16)
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, map[string][]turn{"": {say(10, "finish", args{"summary": "ok"})}})
	h, err := New(Options{
		Root: f.root, Store: f.store, Approver: f.appr, Sandbox: copySandbox{t}, Secrets: []string{key},
		Providers: func(*contract.Contract, RetryReporter) (model.Provider, error) { return f.prov, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Start(context.Background(), goal("configure the client with key "+key+" please"))
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	reqs := f.prov.requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	b, _ := json.Marshal(reqs[0])
	if bytes.Contains(b, []byte(key)) {
		t.Errorf("the key reached the prompt")
	}
	if !bytes.Contains(b, []byte("configure the client with key")) {
		t.Errorf("control: the goal is missing from the prompt: %s", b)
	}
}
