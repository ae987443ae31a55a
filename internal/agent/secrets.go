package agent

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contract"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// A workspace file the agent changes may hold a key (a .env the user
// keeps, a config file with a token). The change set's snapshot in the
// trace must not (docs/architecture.md#secrets-are-sealed-in-snapshots),
// yet resume must restore the file exactly: each secret is stored as a
// placeholder naming where it comes from, ${IOH_SECRET:NAME}, and put back
// from the environment on resume.

// environ is the environment secrets are found in and restored from.
var environ = os.Environ

// placeholder is what a secret called name is stored as.
func placeholder(name string) string { return "${IOH_SECRET:" + name + "}" }

// sealer replaces secrets in change-set contents (workspace.Sealer).
type sealer struct {
	secrets []redact.Secret // longest value first
}

// sealer returns the sealer for the harness's secrets: every secret the
// environment holds (redact.EnvSecrets) and every configured secret value,
// named by the variable that holds it ("" when none does: such a value is
// stored as a placeholder that cannot be restored).
func (h *Harness) sealer() sealer {
	env := environ()
	named := redact.EnvSecrets(env)
	have := map[string]bool{}
	for _, s := range named {
		have[s.Value] = true
	}
	for _, v := range h.opts.Secrets {
		if len(v) < redact.MinSecret || have[v] {
			continue
		}
		name := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && val == v {
				name = k
				break
			}
		}
		named = append(named, redact.Secret{Name: name, Value: v})
		have[v] = true
	}
	sort.SliceStable(named, func(i, j int) bool { return len(named[i].Value) > len(named[j].Value) })
	return sealer{secrets: named}
}

// Seal replaces every occurrence of a secret, leftmost first and the
// longest secret at a position first.
func (s sealer) Seal(data []byte) ([]byte, []workspace.Hole) {
	if len(s.secrets) == 0 {
		return data, nil
	}
	var out bytes.Buffer
	var holes []workspace.Hole
	for rest := data; ; {
		at, which := -1, -1
		for i, sec := range s.secrets {
			if j := bytes.Index(rest, []byte(sec.Value)); j >= 0 && (at < 0 || j < at) {
				at, which = j, i // ties keep the longer secret (listed first)
			}
		}
		if at < 0 {
			if holes == nil {
				return data, nil
			}
			out.Write(rest)
			return out.Bytes(), holes
		}
		out.Write(rest[:at])
		holes = append(holes, workspace.Hole{Off: out.Len(), Name: s.secrets[which].Name})
		out.WriteString(placeholder(s.secrets[which].Name))
		rest = rest[at+len(s.secrets[which].Value):]
	}
}

// Open puts each secret back from the environment as it is now; a secret
// that is gone is an error naming the variable to set.
func (s sealer) Open(data []byte, holes []workspace.Hole) ([]byte, error) {
	env := environ()
	var out bytes.Buffer
	next := 0
	for _, h := range holes {
		ph := placeholder(h.Name)
		if h.Off < next || h.Off+len(ph) > len(data) || string(data[h.Off:h.Off+len(ph)]) != ph {
			return nil, fmt.Errorf("restore secret %s: the stored content has no placeholder at offset %d", h.Name, h.Off)
		}
		if h.Name == "" {
			return nil, fmt.Errorf("restore secret: the change set held a configured secret that is not in any environment variable, so it cannot be restored")
		}
		v, ok := redact.LookupSecret(env, h.Name)
		if !ok {
			variable, _, _ := strings.Cut(h.Name, "#")
			return nil, fmt.Errorf("restore secret: a file of the change set held the value of $%s, which is not set now: set it as it was and try again", variable)
		}
		out.Write(data[next:h.Off])
		out.WriteString(v)
		next = h.Off + len(ph)
	}
	out.Write(data[next:])
	return out.Bytes(), nil
}

// marshalChanges snapshots a change set for the trace, secrets sealed.
func (h *Harness) marshalChanges(cs *workspace.ChangeSet) ([]byte, error) {
	return cs.MarshalSealed(h.sealer())
}

// unmarshalChanges restores a change set from the trace, secrets put back
// from the environment.
func (h *Harness) unmarshalChanges(data []byte) (*workspace.ChangeSet, error) {
	return workspace.UnmarshalSealed(h.opts.Root, data, h.sealer())
}

// withheld lists the workspace files this run's read policy keeps from
// the model, the list the run tool stages empty (tools.Withheld): the
// verification redacts their values out of the checks' output
// (verify.Options.Withheld), which goes to the model and the trace.
func (a *agentRun) withheld() []string {
	w, err := tools.Withheld(a.cs, a.checkRead)
	if err != nil {
		a.h.log.Warn("withheld files", "run", a.id, "err", err)
	}
	return w
}

// withheldOutside is what the configured policy and the contract's own
// rules withhold (tools.Withheld), for a verification outside a run (a
// rebase): no answer given in the run applies, so more is redacted, not
// less. The policy was built for the run before, so an error is logged
// and judged by the built-in layer alone.
func (h *Harness) withheldOutside(c *contract.Contract) []string {
	var reads tools.ReadCheck
	if p, err := h.policyFor(c, nil); err == nil {
		reads = func(lexical, resolved string) policy.Verdict { return p.CheckPath(policy.ActRead, lexical, resolved) }
	} else {
		h.log.Warn("withheld files: the run's policy", "err", err)
	}
	w, err := tools.Withheld(workspace.NewChangeSet(h.opts.Root), reads)
	if err != nil {
		h.log.Warn("withheld files", "err", err)
	}
	return w
}
