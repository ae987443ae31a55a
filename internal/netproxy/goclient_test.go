package netproxy

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moduleProxy serves one module version as a Go module proxy does
// (GOPROXY protocol: list, info, mod, zip).
func moduleProxy(t *testing.T, path, version string) *httptest.Server {
	t.Helper()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{
		"go.mod":   "module " + path + "\n\ngo 1.21\n",
		"hello.go": "package hello\n\nconst Hello = \"hi\"\n",
	} {
		f, err := zw.Create(path + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "/" + path + "/@v/"
		switch r.URL.Path {
		case base + "list":
			fmt.Fprintln(w, version)
		case base + version + ".info":
			fmt.Fprintf(w, `{"Version":%q,"Time":"2024-01-01T00:00:00Z"}`, version)
		case base + version + ".mod":
			fmt.Fprintf(w, "module %s\n\ngo 1.21\n", path)
		case base + version + ".zip":
			w.Write(zb.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A real client: `go mod download` fetches a module from a module proxy
// on loopback that a rule allows by name, through the proxy; the same
// from a name no rule allows fails, and go's error names the host and
// network.allow.
func TestGoModDownloadThroughTheProxy(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on this machine")
	}
	srv := moduleProxy(t, "example.test/hello", "v1.0.0")
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	w := start(t, allow("modules.test", "127.0.0.1:"+port), map[string]string{"modules.test": "127.0.0.1", "other.test": "127.0.0.1"}, "")
	download := func(host string) (string, error) {
		dir := t.TempDir()
		cmd := exec.Command(goBin, "mod", "download", "-json", "example.test/hello@v1.0.0")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOPROXY=http://"+host+":"+port, "GOSUMDB=off", "GOFLAGS=-modcacherw",
			"GOMODCACHE="+filepath.Join(dir, "modcache"), "HTTP_PROXY=http://"+w.Addr(), "HTTPS_PROXY=http://"+w.Addr(), "NO_PROXY=", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := download("modules.test")
	if err != nil || !strings.Contains(out, `"Version": "v1.0.0"`) {
		t.Fatalf("allowed module proxy: %v\n%s", err, out)
	}
	w.mu.Lock()
	var through int64
	for _, r := range w.records {
		if r.Host == "modules.test" && r.Allowed {
			through += r.Down
		}
	}
	w.mu.Unlock()
	if through == 0 {
		t.Fatalf("the download did not go through the proxy: %+v", w.records)
	}
	out, err = download("other.test")
	if err == nil || !strings.Contains(out, "other.test:"+port) || !strings.Contains(out, "network.allow") {
		t.Fatalf("a module proxy no rule allows: %v\n%s", err, out)
	}
}
