package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/sandboxexec"
)

// mcpDir is test/mcp, where `npm ci` installs
// @modelcontextprotocol/server-everything (.ci/run does; make test-go
// needs it done). Without it the tests skip, except under CI, where they
// fail.
func mcpDir(t testing.TB) (dir, everything string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("stdio MCP servers run in the Linux sandbox here")
	}
	dir, err := filepath.Abs("../../test/mcp")
	if err != nil {
		t.Fatal(err)
	}
	everything = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, err = os.Stat(everything)
	_, nerr := exec.LookPath("node")
	if err != nil || nerr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the MCP test server is missing (run npm ci in test/mcp; node: %v): %v", nerr, err)
		}
		t.Skipf("the MCP test server is missing (npm ci in test/mcp): %v %v", err, nerr)
	}
	return dir, everything
}

func contained(t *testing.T) *sandboxexec.Adapter {
	t.Helper()
	ad, err := sandboxexec.New(sandboxexec.Options{Require: "landlock"})
	if err != nil {
		t.Fatal(err)
	}
	return ad
}

func mcpCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func toolMap(ts []tools.Tool) map[string]tools.Tool {
	m := map[string]tools.Tool{}
	for _, x := range ts {
		m[x.Spec().Name] = x
	}
	return m
}

// fileServer serves a body on the host's loopback: what a contained
// server must not reach.
func fileServer(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "reachable from the host")
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/f.txt"
}

// TestMCPStdioServerContained runs the real server-everything from npm
// over stdio inside the sandbox: its tools work, and its network is cut.
// The same fetch by the same server run uncontained succeeds (control).
func TestMCPStdioServerContained(t *testing.T) {
	dir, everything := mcpDir(t)
	ctx := mcpCtx(t)
	target := fileServer(t)
	m, err := mcptool.NewManager([]mcptool.Server{{
		Name: "everything", Command: []string{"node", everything, "stdio"}, Dir: dir,
		Tools: []string{"echo", "gzip-file-as-resource", "trigger-long-running-operation"}, Timeout: 3 * time.Second,
	}}, mcptool.Options{Spawner: contained(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ts, warnings := m.Tools(ctx, nil)
	got := toolMap(ts)
	if len(got) != 3 {
		t.Fatalf("tools %v, warnings %q; want the 3 listed", got, warnings)
	}
	res, err := got["everything__echo"].Call(ctx, json.RawMessage(`{"message":"hello from the sandbox"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "hello from the sandbox") {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	fetch := json.RawMessage(fmt.Sprintf(`{"name":"f.gz","data":%q}`, target))
	res, err = got["everything__gzip-file-as-resource"].Call(ctx, fetch)
	if err != nil || !res.IsError {
		t.Fatalf("contained fetch of %s = %+v, %v; want it to fail (no network)", target, res, err)
	}
	t.Logf("contained fetch: %s", res.Content)

	// A call that outlives the server's timeout: an error result, and the
	// server starts again for the next call.
	res, err = got["everything__trigger-long-running-operation"].Call(ctx, json.RawMessage(`{"duration":60,"steps":2}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "no answer within 3s") {
		t.Fatalf("long call = %+v, %v; want the timeout named", res, err)
	}
	res, err = got["everything__echo"].Call(ctx, json.RawMessage(`{"message":"again"}`))
	if err != nil || res.IsError || !strings.Contains(res.Content, "again") {
		t.Fatalf("echo after a hung call = %+v, %v", res, err)
	}

	// Control: the same server uncontained fetches the same URL.
	cmd := exec.Command("node", everything, "stdio")
	cmd.Dir = dir
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "control"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var args map[string]any
	json.Unmarshal(fetch, &args)
	cr, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "gzip-file-as-resource", Arguments: args})
	if err != nil || cr.IsError {
		t.Fatalf("control: uncontained fetch = %+v, %v; want success (or the contained failure proves nothing)", cr, err)
	}
}

// TestMCPStdioServerCrashes: a server that dies mid-call is an error
// result naming its exit code and stderr; the next call starts it again.
func TestMCPStdioServerCrashes(t *testing.T) {
	dir, _ := mcpDir(t)
	ctx := mcpCtx(t)
	m, err := mcptool.NewManager([]mcptool.Server{{
		Name: "crashy", Command: []string{"node", filepath.Join(dir, "crash.mjs")}, Dir: dir, Tools: []string{"*"}, Timeout: 20 * time.Second,
	}, {
		Name: "dead", Command: []string{"node", "-e", "process.stderr.write('dead: cannot start'); process.exit(3)"}, Tools: []string{"*"},
	}}, mcptool.Options{Spawner: contained(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ts, warnings := m.Tools(ctx, nil)
	got := toolMap(ts)
	if len(got) != 3 {
		t.Fatalf("tools %v; want crashy's 3", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "mcp server dead unavailable") || !strings.Contains(warnings[0], "exited with code 3") || !strings.Contains(warnings[0], "dead: cannot start") {
		t.Errorf("warnings = %q; want dead's exit code and stderr", warnings)
	}
	res, err := got["crashy__crash"].Call(ctx, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "exited with code 7") || !strings.Contains(res.Content, "the tool blew up") {
		t.Fatalf("crash = %+v, %v; want the exit code and stderr", res, err)
	}
	res, err = got["crashy__ok"].Call(ctx, nil)
	if err != nil || res.IsError || res.Content != "fine" {
		t.Fatalf("ok after a crash = %+v, %v; want the server restarted", res, err)
	}
}

// TestMCPStdioNetworkIsJudged: a stdio server whose entry asks for the
// network starts only when the policy allows its hosts.
func TestMCPStdioNetworkIsJudged(t *testing.T) {
	dir, everything := mcpDir(t)
	ctx := mcpCtx(t)
	target := fileServer(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(target, "/f.txt"), "http://"))
	host := "127.0.0.1:" + port
	srv := []mcptool.Server{{Name: "everything", Command: []string{"node", everything, "stdio"}, Dir: dir,
		Network: []string{host}, Tools: []string{"gzip-file-as-resource"}}}
	p, err := policy.New(policy.Builtin(nil))
	if err != nil {
		t.Fatal(err)
	}
	m, err := mcptool.NewManager(srv, mcptool.Options{Spawner: contained(t)})
	if err != nil {
		t.Fatal(err)
	}
	ts, warnings := m.Tools(ctx, p.Check)
	m.Close()
	if len(ts) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "net "+host+" is denied") {
		t.Fatalf("default policy: %d tools, warnings %q; want the server refused", len(ts), warnings)
	}
	allow, _ := p.With(policy.LayerRules{Layer: policy.LayerUser, Rules: []policy.Rule{{Act: policy.ActNet, Effect: policy.Allow, Pattern: host}}})
	m, err = mcptool.NewManager(srv, mcptool.Options{Spawner: contained(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ts, warnings = m.Tools(ctx, allow.Check)
	if len(ts) != 1 {
		t.Fatalf("allowed: %d tools, warnings %q", len(ts), warnings)
	}
	acts, _ := ts[0].Acts(nil)
	if len(acts) != 2 || acts[1].Act != policy.ActNet || acts[1].Target != host {
		t.Errorf("acts = %+v; want mcp and net %s", acts, host)
	}
}
