// Command lspbench measures language servers side by side over stdio:
// spawn → initialize response (median of N), resident memory a fixed time
// after `initialized` on a workspace, and textDocument/codeAction latency
// (p50/p99) on a file of that workspace. It is its own module with only
// the standard library, so it builds offline and stays out of the
// project's layering.
//
//	lspbench -workspace DIR -file REL -- NAME=CMD ARGS... -- NAME=CMD ARGS...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type server struct {
	name string
	argv []string
}

type figures struct {
	initMedian time.Duration
	rssKB      int64
	p50, p99   time.Duration
	actions    int
}

func main() {
	ws := flag.String("workspace", "", "workspace folder (absolute)")
	file := flag.String("file", "", "file to open, relative to the workspace")
	n := flag.Int("n", 10, "spawns for the initialize median")
	settle := flag.Duration("settle", 2*time.Second, "wait after initialized before reading RSS")
	requests := flag.Int("requests", 200, "codeAction requests")
	flag.Parse()
	servers, err := parseServers(flag.Args())
	if err != nil || *ws == "" || *file == "" {
		fmt.Fprintln(os.Stderr, "usage: lspbench -workspace DIR -file REL -- NAME=CMD ARGS... [-- NAME=CMD ARGS...]")
		os.Exit(2)
	}
	results := make([]figures, len(servers))
	for i, s := range servers {
		f, err := measure(s, *ws, *file, *n, *settle, *requests)
		if err != nil {
			fmt.Fprintf(os.Stderr, "lspbench: %s: %v\n", s.name, err)
			os.Exit(1)
		}
		results[i] = f
	}
	report(servers, results)
}

func parseServers(args []string) ([]server, error) {
	var out []server
	var cur []string
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		name, cmd, ok := strings.Cut(cur[0], "=")
		if !ok {
			return fmt.Errorf("want NAME=CMD, got %q", cur[0])
		}
		out = append(out, server{name: name, argv: append([]string{cmd}, cur[1:]...)})
		cur = nil
		return nil
	}
	for _, a := range args {
		if a == "--" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, a)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no servers")
	}
	return out, nil
}

func measure(s server, ws, file string, n int, settle time.Duration, requests int) (figures, error) {
	var f figures
	var inits []time.Duration
	for i := 0; i < n; i++ {
		c, err := spawn(s.argv, ws)
		if err != nil {
			return f, err
		}
		t0 := c.started
		if _, err := c.call("initialize", initParams(ws)); err != nil {
			c.kill()
			return f, fmt.Errorf("initialize: %w", err)
		}
		inits = append(inits, time.Since(t0))
		c.stop()
	}
	sort.Slice(inits, func(i, j int) bool { return inits[i] < inits[j] })
	f.initMedian = inits[len(inits)/2]

	c, err := spawn(s.argv, ws)
	if err != nil {
		return f, err
	}
	defer c.stop()
	if _, err := c.call("initialize", initParams(ws)); err != nil {
		return f, fmt.Errorf("initialize: %w", err)
	}
	c.notify("initialized", map[string]any{})
	time.Sleep(settle)
	if f.rssKB, err = rss(c.cmd.Process.Pid); err != nil {
		return f, err
	}
	abs := filepath.Join(ws, file)
	text, err := os.ReadFile(abs)
	if err != nil {
		return f, err
	}
	uri := "file://" + abs
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": string(text)}})
	lines := strings.Count(string(text), "\n")
	var lat []time.Duration
	for i := 0; i < requests+5; i++ {
		line := (i * 7) % max(lines-1, 1)
		params := map[string]any{
			"textDocument": map[string]any{"uri": uri},
			"range":        map[string]any{"start": map[string]any{"line": line, "character": 0}, "end": map[string]any{"line": line + 1, "character": 0}},
			"context":      map[string]any{"diagnostics": []any{}},
		}
		t0 := time.Now()
		if _, err := c.call("textDocument/codeAction", params); err != nil {
			return f, fmt.Errorf("codeAction: %w", err)
		}
		if i >= 5 { // the first few warm up caches
			lat = append(lat, time.Since(t0))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	f.p50 = lat[len(lat)/2]
	f.p99 = lat[(len(lat)*99)/100-1]
	f.actions = len(lat)
	return f, nil
}

func initParams(ws string) map[string]any {
	uri := "file://" + ws
	return map[string]any{
		"processId":        os.Getpid(),
		"rootUri":          uri,
		"workspaceFolders": []any{map[string]any{"uri": uri, "name": filepath.Base(ws)}},
		"capabilities": map[string]any{
			"workspace":    map[string]any{"configuration": true, "workspaceFolders": true},
			"textDocument": map[string]any{"codeAction": map[string]any{"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{"quickfix", "refactor", "source"}}}}},
			"window":       map[string]any{"workDoneProgress": true},
		},
	}
}

// rss reads VmRSS of pid in kB.
func rss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read rss: %w", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			fs := strings.Fields(l)
			if len(fs) >= 2 {
				return strconv.ParseInt(fs[1], 10, 64)
			}
		}
	}
	return 0, errors.New("no VmRSS")
}

func report(servers []server, rs []figures) {
	ref := rs[len(rs)-1]
	refName := servers[len(servers)-1].name
	fmt.Printf("%-10s %14s %10s %12s %12s\n", "server", "init median", "RSS", "action p50", "action p99")
	for i, s := range servers {
		f := rs[i]
		fmt.Printf("%-10s %14s %8.1fMB %12s %12s\n", s.name, f.initMedian.Round(10*time.Microsecond), float64(f.rssKB)/1024, f.p50.Round(time.Microsecond), f.p99.Round(time.Microsecond))
	}
	for i, s := range servers[:len(servers)-1] {
		f := rs[i]
		fmt.Printf("ratio %s/%s: init %.3gx, RSS %.3gx, codeAction p50 %.3gx, p99 %.3gx (%d requests)\n", s.name, refName,
			ratio(f.initMedian, ref.initMedian), float64(f.rssKB)/float64(ref.rssKB), ratio(f.p50, ref.p50), ratio(f.p99, ref.p99), f.actions)
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// conn is one spawned server speaking LSP over its stdio.
type conn struct {
	cmd     *exec.Cmd
	started time.Time
	stdin   io.WriteCloser
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan reply
	done    chan struct{}
}

type reply struct {
	result json.RawMessage
	err    error
}

func spawn(argv []string, dir string) (*conn, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &conn{cmd: cmd, stdin: stdin, waiting: map[int]chan reply{}, done: make(chan struct{})}
	c.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go c.read(bufio.NewReader(stdout))
	return c, nil
}

func (c *conn) write(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = fmt.Fprintf(c.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

func (c *conn) call(method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	if err := c.write(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-c.done:
		return nil, errors.New("server exited")
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("%s: no answer in 2m", method)
	}
}

func (c *conn) notify(method string, params any) {
	_ = c.write(map[string]any{"method": method, "params": params})
}

// read dispatches responses and answers the server's own requests.
func (c *conn) read(r *bufio.Reader) {
	defer close(c.done)
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			var result any
			if m.Method == "workspace/configuration" {
				var p struct {
					Items []any `json:"items"`
				}
				_ = json.Unmarshal(m.Params, &p)
				items := make([]any, len(p.Items))
				for i := range items {
					items[i] = map[string]any{}
				}
				result = items
			}
			_ = c.write(map[string]any{"id": m.ID, "result": result})
		case m.Method == "" && len(m.ID) > 0:
			id, _ := strconv.Atoi(string(m.ID))
			c.mu.Lock()
			ch := c.waiting[id]
			delete(c.waiting, id)
			c.mu.Unlock()
			if ch != nil {
				var err error
				if m.Error != nil {
					err = errors.New(m.Error.Message)
				}
				ch <- reply{m.Result, err}
			}
		}
	}
}

// stop asks for shutdown and exit, then kills what remains.
func (c *conn) stop() {
	go func() {
		_, _ = c.call("shutdown", nil)
		c.notify("exit", nil)
	}()
	select {
	case <-c.done:
	case <-time.After(3 * time.Second):
	}
	c.kill()
}

func (c *conn) kill() {
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}
