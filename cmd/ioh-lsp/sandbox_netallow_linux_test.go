package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// TestSandboxRunNetAllow runs curl under `sandbox run --net-allow` in
// each Linux tier, through the real egress proxy: the host the flag names
// (a loopback test server, named by its exact address as the proxy
// requires) is reached through the proxy, the same server around the
// proxy and a host the flag does not name are refused, and the denial is
// printed with the rule that decided it and the fix.
func TestSandboxRunNetAllow(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	const marker = "NET-ALLOW-MARKER"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, marker) }))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	url := "http://" + addr + "/"
	ran := 0
	for _, backend := range []string{"linux", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			run := func(allow string, curlArgs ...string) (int, string, string) {
				args := append([]string{"sandbox", "run", "--backend", backend, "--net-allow", allow, "--", curl, "-fsS", "-m", "10"}, curlArgs...)
				return runCLI(t, args...)
			}
			// The proxy environment names loopback in NO_PROXY: --noproxy ""
			// sends even a loopback URL through the proxy.
			code, out, errs := run(addr, "--noproxy", "", url)
			if code == exitSandboxSetup && strings.Contains(errs, "unavailable") {
				t.Skipf("the %s tier does not run here: %s", backend, errs)
			}
			ran++
			if code != 0 || out != marker {
				t.Errorf("allowed host through the proxy: code %d stdout %q stderr %q", code, out, errs)
			}
			code, out, errs = run(addr, "--noproxy", "*", url)
			if code == 0 || strings.Contains(out, marker) {
				t.Errorf("the allowed server around the proxy was reached: code %d stdout %q stderr %q", code, out, errs)
			}
			code, out, errs = run("elsewhere.test", "--noproxy", "", url)
			if code == 0 || strings.Contains(out, marker) || !strings.Contains(errs, "network: denied "+addr+" by ") || !strings.Contains(errs, "--net-allow HOST") {
				t.Errorf("a host --net-allow does not name: code %d stdout %q stderr %q", code, out, errs)
			}
		})
	}
	if code, _, errs := runCLI(t, "sandbox", "run", "--net", "--net-allow", addr, "--", "true"); code != exitUsage || !strings.Contains(errs, "give one") {
		t.Errorf("--net with --net-allow: code %d stderr %q, want a usage error", code, errs)
	}
	if code, _, errs := runCLI(t, "sandbox", "run", "--net-allow", "preset:nope", "--", "true"); code != exitUsage || !strings.Contains(errs, "unknown preset") {
		t.Errorf("an unknown preset: code %d stderr %q, want a usage error", code, errs)
	}
	// Control: uncontained, curl reaches the server directly.
	if b, err := exec.Command(curl, "-sS", "-m", "10", url).Output(); err != nil || string(b) != marker {
		t.Errorf("control: curl %s uncontained: %v %q", url, err, b)
	}
}

// TestSandboxDoctorNetAllow: doctor says which tier enforces the
// allow-list and how, and for each tier how it would or why it cannot.
func TestSandboxDoctorNetAllow(t *testing.T) {
	_, out, _ := runCLI(t, "sandbox", "doctor")
	for _, want := range []string{
		"network allow-list (--net-allow, network.allow): the ",
		"tier a run gets here enforces it: ",
		"allow-list             the command's own network namespace has only lo",
		"allow-list             Landlock lets TCP connect only to the proxy's port",
		"allow-list             a run restricted to allowed hosts is refused: the tier bounds resources only",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
}
