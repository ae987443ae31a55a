package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/mcptool"
)

// mcpServerParam is one entry of session/new's mcpServers: stdio (no
// type, or "stdio": command, args, env) or "http" (url, headers). "sse"
// is not spoken (mcpCapabilities.sse is false).
type mcpServerParam struct {
	Type    string      `json:"type"`
	Name    string      `json:"name"`
	Command string      `json:"command"`
	Args    []string    `json:"args"`
	Env     []nameValue `json:"env"`
	URL     string      `json:"url"`
	Headers []nameValue `json:"headers"`
}

type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// mcpServers converts the client's MCP servers to the engine's entries,
// checked by the same validation as configured servers. The client chose
// each server, so all its tools are exposed (Tools "*"); each call is
// still an `mcp` act the policy judges (default ask, so a
// session/request_permission), an HTTP server's host a `net` act it must
// allow before the server is contacted, and a stdio server runs in the
// sandbox with no network, its command's directory readable (installDir).
// Env entries are passed as given: the sandbox
// refuses to start a server whose environment carries a secret-looking
// name (the server's tools are then missing and the agent's log says
// why). warnings name what could not be passed on (an HTTP entry's
// headers).
func mcpServers(raw []json.RawMessage) (out []mcptool.Server, warnings []string, err error) {
	seen := map[string]bool{}
	for i, r := range raw {
		var p mcpServerParam
		if err := json.Unmarshal(r, &p); err != nil {
			return nil, nil, invalidParams("mcpServers[%d]: %v", i, err)
		}
		if p.Name == "" {
			return nil, nil, invalidParams("mcpServers[%d]: want an object with a name", i)
		}
		s := mcptool.Server{Name: mcpName(p.Name), Tools: []string{"*"}}
		switch p.Type {
		case "", "stdio":
			if p.Command == "" {
				return nil, nil, invalidParams("mcpServers[%d] (%s): a stdio server needs a command", i, p.Name)
			}
			s.Command = append([]string{p.Command}, p.Args...)
			s.Dir = installDir(p.Command)
			if len(p.Env) > 0 {
				s.Env = map[string]string{}
				for _, e := range p.Env {
					s.Env[e.Name] = e.Value
				}
			}
		case "http":
			s.URL = p.URL
			if len(p.Headers) > 0 {
				names := make([]string, 0, len(p.Headers))
				for _, h := range p.Headers {
					names = append(names, h.Name)
				}
				warnings = append(warnings, "mcp server "+s.Name+": its headers ("+strings.Join(names, ", ")+") are not sent; the server is reached without them")
			}
		default:
			return nil, nil, invalidParams("mcpServers[%d] (%s): transport %q is not supported (stdio and http are)", i, p.Name, p.Type)
		}
		if err := s.Validate(); err != nil {
			return nil, nil, invalidParams("mcpServers[%d]: %v", i, err)
		}
		if seen[s.Name] {
			return nil, nil, invalidParams("mcpServers[%d]: two servers are named %s", i, s.Name)
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	return out, warnings, nil
}

// installDir is the working directory of a client's stdio server: the
// directory of its command (ACP names it by absolute path), which joins
// the sandbox's read view, read-only, so that a server installed outside
// the system directories and PATH can start at all (masked paths such as
// ~/.ssh stay hidden inside it). Not for a command directly in / or in
// the home directory (or a parent of it), which would show the whole
// home: such a server gets a private empty directory, and starts only
// when its command is in the view anyway.
func installDir(command string) string {
	if !filepath.IsAbs(command) {
		return ""
	}
	dir := filepath.Dir(filepath.Clean(command))
	if dir == string(filepath.Separator) {
		return ""
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(dir, filepath.Clean(home)); err == nil && !strings.HasPrefix(rel, "..") {
			return ""
		}
	}
	return dir
}

// mcpName is a client's server name as a tool-name prefix: characters
// other than letters, digits, '-' and '_' become '-', "__" (the
// separator of server__tool) becomes "_", at most 32 characters.
// "GitHub MCP" is GitHub-MCP.
func mcpName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	if len(s) > 32 {
		s = s[:32]
	}
	return s
}

// traceMeta reads a request's `_meta.traceparent` and
// `_meta.tracestate` (W3C Trace Context); ok is false when there is no
// traceparent string. Whether it is well formed is agent.WithTraceContext's
// call.
func traceMeta(params json.RawMessage) (tc agent.TraceContext, ok bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return tc, false
	}
	if json.Unmarshal(p.Meta["traceparent"], &tc.Traceparent) != nil || tc.Traceparent == "" {
		return agent.TraceContext{}, false
	}
	if json.Unmarshal(p.Meta["tracestate"], &tc.Tracestate) != nil {
		tc.Tracestate = ""
	}
	return tc, true
}

// withTrace returns ctx continuing the trace of the prompt's `_meta`, or
// else of the session's (session/new or session/load); a malformed
// traceparent is dropped there and the run starts a trace of its own.
func withTrace(ctx context.Context, prompt json.RawMessage, session *agent.TraceContext) context.Context {
	if tc, ok := traceMeta(prompt); ok {
		return agent.WithTraceContext(ctx, tc)
	}
	if session != nil {
		return agent.WithTraceContext(ctx, *session)
	}
	return ctx
}
