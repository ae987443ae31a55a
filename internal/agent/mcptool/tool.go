package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
)

// MaxDescription caps the description a server gives a tool: it goes
// into every prompt.
const MaxDescription = 1024

// MaxSchema caps a tool's input schema, for the same reason.
const MaxSchema = 8 << 10

// pingTimeout bounds the ping that tells a dead server from a failing tool.
const pingTimeout = 2 * time.Second

// tool is one exposed tool of a server.
type tool struct {
	c    *conn
	name string // the server's name for it
	spec model.ToolSpec
}

func newTool(c *conn, t *mcp.Tool) (*tool, error) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || !bytes.HasPrefix(bytes.TrimSpace(schema), []byte("{")) {
		return nil, errors.New("its input schema is not a JSON object")
	}
	if len(schema) > MaxSchema {
		return nil, fmt.Errorf("its input schema is %d bytes, over the %d-byte cap", len(schema), MaxSchema)
	}
	desc := strings.TrimSpace(t.Description)
	if len(desc) > MaxDescription {
		desc = desc[:MaxDescription] + "…"
	}
	desc = fmt.Sprintf("[MCP server %s, tool %s] %s", c.srv.Name, t.Name, desc)
	return &tool{c: c, name: t.Name, spec: model.ToolSpec{Name: ToolName(c.srv.Name, t.Name), Description: desc, Schema: schema}}, nil
}

func (t *tool) Spec() model.ToolSpec { return t.spec }

// ReadOnly is false: what a server's tool does is not ours to know.
func (t *tool) ReadOnly() bool { return false }

// Acts: the mcp act server/tool, then a net act for every host the call
// can reach (an HTTP server's, a stdio server's network entries). The
// arguments must be a JSON object.
func (t *tool) Acts(args json.RawMessage) ([]tools.Act, error) {
	if _, err := arguments(args); err != nil {
		return nil, err
	}
	acts := []tools.Act{{Act: policy.ActMCP, Target: policy.MCPTarget(t.c.srv.Name, t.name)}}
	for _, h := range t.c.srv.hosts() {
		acts = append(acts, tools.Act{Act: policy.ActNet, Target: h})
	}
	return acts, nil
}

func arguments(args json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("bad arguments: want a JSON object: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// Call sends the call under the server's timeout. A server that crashed
// or did not answer in time is an error result the model sees; the
// server is stopped and started again on the next call.
func (t *tool) Call(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	m, err := arguments(args)
	if err != nil {
		return tools.Errorf("%v", err), nil
	}
	sess, err := t.c.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return tools.Errorf("mcp server %s unavailable: %v", t.c.srv.Name, err), nil
	}
	cctx, cancel := context.WithTimeout(ctx, t.c.srv.timeout())
	defer cancel()
	res, err := sess.CallTool(cctx, &mcp.CallToolParams{Name: t.name, Arguments: m})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		var why string
		switch {
		case cctx.Err() != nil:
			why = fmt.Sprintf("no answer within %s; the server was stopped and starts again on the next call", t.c.srv.timeout())
			t.c.broken(sess)
		case t.c.dead(sess):
			why = fmt.Sprintf("%v (%s); it starts again on the next call", err, t.c.endedNote())
			t.c.broken(sess)
		default:
			why = err.Error()
		}
		return tools.Errorf("%s failed: %s", t.spec.Name, why), nil
	}
	return render(res), nil
}

// dead reports whether sess's server is gone (its process ended or the
// connection closed).
func (c *conn) dead(sess *mcp.ClientSession) bool {
	c.mu.Lock()
	proc := c.proc
	same := c.sess == sess
	c.mu.Unlock()
	if !same {
		return true
	}
	if proc != nil {
		select {
		case <-proc.Done:
			return true
		default:
		}
	}
	// A ping tells a closed connection from a tool's own error.
	pctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	return sess.Ping(pctx, nil) != nil
}

func (c *conn) endedNote() string {
	c.mu.Lock()
	proc := c.proc
	c.mu.Unlock()
	if proc == nil {
		return "the connection closed"
	}
	t := time.NewTimer(pingTimeout)
	defer t.Stop()
	select {
	case <-proc.Done:
		return ended(proc)
	case <-t.C:
		return "the connection closed"
	}
}

// render turns a result into what the model sees, capped at
// tools.MaxResult bytes.
func render(res *mcp.CallToolResult) tools.Result {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch x := c.(type) {
		case *mcp.TextContent:
			b.WriteString(x.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes, not shown]", x.MIMEType, len(x.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes, not shown]", x.MIMEType, len(x.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource %s %s]", x.Name, x.URI)
		case *mcp.EmbeddedResource:
			if x.Resource != nil && x.Resource.Text != "" {
				fmt.Fprintf(&b, "[resource %s]\n%s", x.Resource.URI, x.Resource.Text)
			} else if x.Resource != nil {
				fmt.Fprintf(&b, "[resource %s, %d bytes, not shown]", x.Resource.URI, len(x.Resource.Blob))
			}
		default:
			fmt.Fprintf(&b, "[%T content, not shown]", c)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	s := b.String()
	if len(s) > tools.MaxResult {
		s = s[:tools.MaxResult] + fmt.Sprintf("\n[... %d more bytes not shown]", len(s)-tools.MaxResult)
	}
	return tools.Result{Content: s, IsError: res.IsError}
}
