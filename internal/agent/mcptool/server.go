// Package mcptool turns the tools of MCP servers into agent tools (see
// docs/mcp.md#mcp-servers-as-tools): each tool a configured server lists
// and the configuration exposes becomes a model tool named server__tool,
// and each call is an `mcp` act (target server/tool) the run's policy
// judges, plus a `net` act for every host the call can reach. Stdio servers run contained
// (through contain.Spawner, never uncontained); HTTP servers are reached
// over streamable HTTP. Servers come from the user config, the editor
// settings or an ACP client, never from a repository.
package mcptool

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ErrConfig marks a server entry that cannot be used.
var ErrConfig = errors.New("mcp server")

// Server is one configured MCP server: Command (stdio, contained) or URL
// (streamable HTTP), exactly one.
type Server struct {
	// Name is the server's name in tool names (name__tool) and act
	// targets (name/tool): letters, digits, '-' and '_' (no "__").
	Name string
	// Command is the argv of a stdio server; Dir its absolute working
	// directory (readable, not writable; "" a private empty one); Env
	// entries added to its environment.
	Command []string
	Dir     string
	Env     map[string]string
	// Network lists the host[:port]s a stdio server may reach. Empty: no
	// network at all. Each is a `net` act the policy must allow before
	// the server starts and again at every call.
	Network []string
	// URL is a streamable HTTP endpoint (http or https); its host is a
	// `net` act.
	URL string
	// Tools lists the server's tools exposed to the model ("*": all).
	// Each definition costs prompt tokens on every turn, so none is
	// exposed unless listed.
	Tools []string
	// Timeout bounds each call (default DefaultTimeout).
	Timeout time.Duration
	// Source says where the entry came from ("user config", "editor
	// settings", "acp client"), for messages.
	Source string
}

// Defaults.
const (
	DefaultTimeout = 60 * time.Second
	// StartTimeout bounds starting a server and listing its tools.
	StartTimeout = 30 * time.Second
)

// The patterns compile on first use, not in package init: a counted
// repetition compiles to one instruction per count, and the binary starts
// for every CLI command and sandboxed stage (internal/archtest guards this).
var (
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`) })
	// toolRE is what every provider accepts as a tool name.
	toolRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
)

// Validate checks the entry.
func (s *Server) Validate() error {
	if !nameRE().MatchString(s.Name) || strings.Contains(s.Name, "__") {
		return fmt.Errorf("%w %q: the name must be 1-32 letters, digits, '-' or '_', without \"__\"", ErrConfig, s.Name)
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return fmt.Errorf("%w %s: give command or url, not both", ErrConfig, s.Name)
	case len(s.Command) > 0:
		if s.Command[0] == "" {
			return fmt.Errorf("%w %s: empty command name", ErrConfig, s.Name)
		}
		for _, h := range s.Network {
			if h == "" || strings.ContainsAny(h, "/ \t") {
				return fmt.Errorf("%w %s: network entry %q must be host[:port]", ErrConfig, s.Name, h)
			}
		}
	case s.URL != "":
		if _, err := s.host(); err != nil {
			return err
		}
		if len(s.Network) > 0 {
			return fmt.Errorf("%w %s: network is for stdio servers; an HTTP server's host comes from its url", ErrConfig, s.Name)
		}
	default:
		return fmt.Errorf("%w %s: give a command (stdio) or a url (streamable HTTP)", ErrConfig, s.Name)
	}
	for _, t := range s.Tools {
		if t != "*" && strings.TrimSpace(t) == "" {
			return fmt.Errorf("%w %s: empty tool name in tools", ErrConfig, s.Name)
		}
	}
	if s.Timeout < 0 {
		return fmt.Errorf("%w %s: negative timeout", ErrConfig, s.Name)
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("%w %s: bad environment name %q", ErrConfig, s.Name, k)
		}
	}
	return nil
}

// host is an HTTP server's host:port, the target of its net act.
func (s *Server) host() (string, error) {
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", fmt.Errorf("%w %s: url %q is not an http(s) URL", ErrConfig, s.Name, s.URL)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port), nil
}

// hosts are the net targets a call of the server can reach.
func (s *Server) hosts() []string {
	if s.URL != "" {
		h, _ := s.host()
		return []string{h}
	}
	return append([]string(nil), s.Network...)
}

// exposes reports whether the entry lists tool.
func (s *Server) exposes(tool string) bool {
	for _, t := range s.Tools {
		if t == "*" || t == tool {
			return true
		}
	}
	return false
}

func (s *Server) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// ToolName is the model tool of server's tool: server__tool.
func ToolName(server, tool string) string { return server + "__" + tool }
