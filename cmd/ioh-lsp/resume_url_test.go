package main

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestResumeKeepsConfiguredURLCredentials: the credentials of a
// configured base_url (userinfo password, ?api_key=) are redacted in the
// stored contract, yet a resume in a new process reaches the endpoint
// with them, put back from the configuration, and still stores and
// prints none of them.
func TestResumeKeepsConfiguredURLCredentials(t *testing.T) {
	const pw, q = "pw-SUPERSECRET-98765", "QSECRET-0123456789"
	chat, _ := newChatServer(t, readTurns(2), nil)
	target, _ := url.Parse(chat.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var seen []string // query and Authorization of each request
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		r.URL.RawQuery = ""
		r.URL.Path = "/v1/chat/completions"
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	requests := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	w := newBudgetWorld(t, map[string]string{"a.txt": "a\nb\nc\n", "t.ioh.yaml": "version: 1\ngoal: read\nbudget: {steps: 1}\n"})
	w.userConfig("model:\n  provider: openai-compatible\n  base_url: http://user:" + pw + "@" + strings.TrimPrefix(front.URL, "http://") + "/v1?api_key=" + q + "\n  name: local\nprices:\n  local: {input: 0, output: 0}\n")
	code, out1, errOut := w.cli("run", "t.ioh.yaml", "--approve", "never", "--json")
	if code != exitBudget {
		t.Fatalf("run exit %d, want %d\n%s", code, exitBudget, errOut)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+pw))
	check := func(what string, reqs []string) {
		if len(reqs) == 0 {
			t.Fatalf("%s: the endpoint got no request", what)
		}
		for _, r := range reqs {
			if !strings.Contains(r, "api_key="+q) || (strings.Contains(r, "Basic ") && !strings.Contains(r, basic)) {
				t.Errorf("%s: a request came without the configured credentials: %q", what, r)
			}
		}
	}
	check("run (control)", requests())
	id := runID(t, errOut)
	code, out2, errOut2 := w.cli("resume", id, "--budget-steps", "5", "--approve", "never", "--json")
	if code != exitOK {
		t.Fatalf("resume exit %d\n%s", code, errOut2)
	}
	check("resume", requests())
	written := map[string][]byte{"output": []byte(out1 + errOut + out2 + errOut2)}
	filepath.Walk(w.env["IOH_STATE_DIR"], func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			written[p] = b
		}
		return nil
	})
	for name, b := range written {
		for _, s := range []string{pw, q} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds %s", name, s)
			}
		}
	}
}
