package mcptool

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
)

// startEgress gives a stdio server whose entry lists hosts a proxy of its
// own that reaches exactly those hosts (docs/mcp.md#where-servers-run),
// when the sandbox can confine a network to a proxy; nil when the entry
// lists none or the sandbox cannot (then the server gets the network as
// before).
func (c *conn) startEgress(ctx context.Context) (*contain.NetProxy, contain.Egress, error) {
	ep, ok := c.m.opts.Spawner.(contain.EgressProvider)
	if !ok || len(c.srv.Network) == 0 {
		return nil, nil, nil
	}
	rules := make([]policy.Rule, 0, len(c.srv.Network))
	for _, h := range c.srv.Network {
		rules = append(rules, policy.Rule{Act: policy.ActNet, Effect: policy.Allow, Pattern: h})
	}
	listed, err := policy.New(policy.LayerRules{Layer: policy.LayerUser, Rules: rules})
	if err != nil {
		return nil, nil, fmt.Errorf("%w %s: network: %v", ErrConfig, c.srv.Name, err)
	}
	name, hosts := c.srv.Name, strings.Join(c.srv.Network, ", ")
	e := ep.Egress(contain.NetJudge{
		Judge: func(_ context.Context, host string, port int) contain.NetVerdict {
			v := listed.Check(policy.ActNet, net.JoinHostPort(host, strconv.Itoa(port)))
			out := contain.NetVerdict{Allow: v.Effect == policy.Allow, Layer: "mcp"}
			if v.Rule != nil {
				out.Rule = v.Rule.Pattern
			}
			if !out.Allow {
				out.Reason = fmt.Sprintf("the MCP server %s lists only %s under network (mcp.servers in the user config)", name, hosts)
			}
			return out
		},
		Record: func(n contain.NetConn) {
			c.m.log.Info("mcp server connection", "server", name, "host", n.Host, "port", n.Port, "allowed", n.Allowed,
				"reason", n.Reason, "bytes_up", n.Up, "bytes_down", n.Down, "duration", n.Duration)
		},
	})
	p, err := e.Proxy(ctx)
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return p, e, nil
}
