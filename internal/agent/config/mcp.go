package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// MCPServer is one entry of `mcp.servers` (docs/mcp.md#mcp-servers-as-tools): a stdio server
// (Command, run contained) or a streamable HTTP one (URL), and the tools
// of it the model sees. It has mcptool.Server's fields in its order, so
// the wiring converts one to the other (keep them alike).
type MCPServer struct {
	Name    string
	Command []string
	Dir     string
	Env     map[string]string
	// Network lists the host[:port]s a stdio server may reach.
	Network []string
	URL     string
	// Tools exposed to the model ("*": all); none when empty.
	Tools   []string
	Timeout time.Duration
	// Source is where the entry came from (the user config's path or
	// EditorSource).
	Source string
}

// Telemetry is the `telemetry` key (user config only).
type Telemetry struct {
	// OTLPEndpoint is an OTLP/HTTP collector's base URL
	// (http://localhost:4318); "" exports nothing.
	OTLPEndpoint string
}

type fileMCP struct {
	Servers []fileMCPServer `yaml:"servers"`
}

type fileMCPServer struct {
	Name    string            `yaml:"name"`
	Command []string          `yaml:"command"`
	Dir     string            `yaml:"dir"`
	Env     map[string]string `yaml:"env"`
	Network []string          `yaml:"network"`
	URL     string            `yaml:"url"`
	Tools   []string          `yaml:"tools"`
	Timeout *string           `yaml:"timeout"`
}

// Harness is the `harness` key (user config only): what a model sees,
// switched off to measure what it is worth (docs/eval.md#variants).
type Harness struct {
	// NoMasking keeps old tool results whole (`masking: false`).
	NoMasking bool
	// NoReview skips showing the model its diff before the checks
	// (`review_changes: false`).
	NoReview bool
}

type fileHarness struct {
	Masking       *bool `yaml:"masking"`
	ReviewChanges *bool `yaml:"review_changes"`
}

// mergeHarness takes `harness` from the user config only: it changes
// what every run's model is shown, the user's choice alone.
func (c *Config) mergeHarness(p *parsed, kind source, warn func(key, why string)) {
	if p.Harness == nil {
		return
	}
	if kind != fromUser {
		warn("harness", c.userOnly())
		return
	}
	if m := p.Harness.Masking; m != nil {
		c.Harness.NoMasking = !*m
	}
	if r := p.Harness.ReviewChanges; r != nil {
		c.Harness.NoReview = !*r
	}
}

type fileTelemetry struct {
	OTLPEndpoint *string `yaml:"otlp_endpoint"`
}

// mergeMCP takes `mcp` from the user config, and from the editor
// settings of a trusted workspace; an editor entry replaces the user entry
// of the same name. A repository cannot add a server (it would run a
// program of its choosing, or reach a host of its choosing, with the
// user's approval habits), so the workspace's key is ignored with a
// warning, trusted or not, and so are the editor settings' servers in an
// untrusted workspace (an editor merges the repository's own settings
// into its settings).
func (c *Config) mergeMCP(p *parsed, kind source, untrusted bool, warn func(key, why string), getenv func(string) string) error {
	if p.MCP == nil {
		return nil
	}
	if kind == fromWorkspace {
		if len(p.MCP.Servers) > 0 {
			warn("mcp", "a repository cannot add an MCP server; list it under mcp.servers in the user config "+c.userPath)
		}
		return nil
	}
	servers, err := p.mcpServers(getenv)
	if err != nil {
		return err // checked even when dropped: a bad entry is an error wherever it is written
	}
	if untrusted {
		if len(servers) > 0 {
			warn("mcp", c.notTrusted(kind))
		}
		return nil
	}
	for _, s := range servers {
		replaced := false
		for j := range c.MCP {
			if c.MCP[j].Name == s.Name {
				c.MCP[j], replaced = s, true
			}
		}
		if !replaced {
			c.MCP = append(c.MCP, s)
		}
	}
	return nil
}

// mcpServers checks and converts the layer's mcp.servers.
func (p *parsed) mcpServers(getenv func(string) string) ([]MCPServer, error) {
	var out []MCPServer
	seen := map[string]bool{}
	for i, f := range p.MCP.Servers {
		at := fmt.Sprintf("$.mcp.servers[%d]", i)
		s := MCPServer{Name: f.Name, Command: f.Command, Env: f.Env, Network: f.Network, URL: f.URL, Tools: f.Tools, Source: p.source}
		if strings.TrimSpace(f.Name) == "" {
			return nil, p.errAt(at, "mcp.servers[%d]: name is required", i)
		}
		if seen[f.Name] {
			return nil, p.errAt(at+".name", "mcp.servers[%d]: server %q is listed twice", i, f.Name)
		}
		seen[f.Name] = true
		if (len(f.Command) > 0) == (f.URL != "") {
			return nil, p.errAt(at, "mcp.servers[%d] (%s): give exactly one of command (stdio) and url (streamable HTTP)", i, f.Name)
		}
		if f.URL != "" {
			u, err := url.Parse(f.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, p.errAt(at+".url", "mcp.servers[%d] (%s): url %q is not an http(s) URL", i, f.Name, f.URL)
			}
		}
		if f.Dir != "" {
			s.Dir = expandHome(f.Dir, getenv)
			if !filepath.IsAbs(s.Dir) {
				return nil, p.errAt(at+".dir", "mcp.servers[%d] (%s): dir %q is not an absolute path", i, f.Name, f.Dir)
			}
		}
		d, err := p.duration(at+".timeout", f.Timeout)
		if err != nil {
			return nil, err
		}
		s.Timeout = d
		out = append(out, s)
	}
	return out, nil
}

// mergeTelemetry takes `telemetry` from the user config only: where the
// traces of every run go is the user's choice, not a repository's or an
// editor workspace's.
func (c *Config) mergeTelemetry(p *parsed, kind source, warn func(key, why string)) error {
	if p.Telemetry == nil || p.Telemetry.OTLPEndpoint == nil {
		return nil
	}
	if kind != fromUser {
		warn("telemetry", c.userOnly())
		return nil
	}
	e := strings.TrimSpace(*p.Telemetry.OTLPEndpoint)
	if e != "" {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return p.errAt("$.telemetry.otlp_endpoint", "telemetry.otlp_endpoint: %q is not an http(s) URL (an OTLP/HTTP collector, e.g. http://localhost:4318)", e)
		}
	}
	c.Telemetry.OTLPEndpoint = e
	return nil
}
