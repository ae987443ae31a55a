package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/contain"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/model"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// RunParams are run's arguments: Argv or Shell, exactly one.
type RunParams struct {
	Argv    []string `json:"argv,omitempty"`
	Shell   string   `json:"shell,omitempty"`
	Timeout string   `json:"timeout,omitempty"`
}

const runDesc = "Run a command in the sandbox over the workspace with the pending change set applied (its own writes are discarded; no network, or only the hosts the user allows, through a proxy named in HTTP_PROXY). Give argv (no shell) or shell (a /bin/sh line). timeout is a Go duration (default 2m, at most 10m)."

const runSchema = `{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"},"minItems":1},"shell":{"type":"string"},"timeout":{"type":"string","description":"Go duration, e.g. 30s"}},"additionalProperties":false}`

// RunKeep is the output a run result keeps: past it, the first and the
// last half (5 KiB each), with the number of bytes left out between them.
// The command runs to its end either way.
const RunKeep = 10 << 10

// Run's timeout bounds.
const (
	DefaultRunTimeout = 2 * time.Minute
	MaxRunTimeout     = contain.MaxTimeout
)

type run struct {
	cs    *workspace.ChangeSet
	sb    contain.Sandbox
	reads ReadCheck
}

// NewRun returns run over cs in sb; the files reads does not allow are
// empty inside (nil: the built-in layer judges).
func NewRun(cs *workspace.ChangeSet, sb contain.Sandbox, reads ReadCheck) Tool {
	return run{cs, sb, reads}
}

// Withheld lists the workspace files the model may not read through a
// command: those reads judges as read_file would and does not simply
// allow (deny, or ask with no allow for this run; nil reads: the built-in
// layer). run stages them empty; verification, which lets its checks read
// them, redacts their values out of the checks' output
// (verify.Options.Withheld). The error says the walk stopped at
// contain.MaxWithheldWalk.
func Withheld(cs *workspace.ChangeSet, reads ReadCheck) ([]string, error) {
	return contain.Withheld(cs.Root().Dir(), newReadFilter(cs, reads).allow)
}

func (run) Spec() model.ToolSpec { return spec("run", runDesc, runSchema) }
func (run) ReadOnly() bool       { return false }

func parseRun(args json.RawMessage) (RunParams, time.Duration, error) {
	var p RunParams
	if err := decode(args, &p); err != nil {
		return p, 0, err
	}
	if (len(p.Argv) == 0) == (p.Shell == "") {
		return p, 0, fmt.Errorf("bad arguments: give exactly one of argv and shell")
	}
	d := DefaultRunTimeout
	if p.Timeout != "" {
		var err error
		if d, err = time.ParseDuration(p.Timeout); err != nil || d <= 0 {
			return p, 0, fmt.Errorf("bad arguments: timeout %q is not a positive Go duration", p.Timeout)
		}
		d = min(d, MaxRunTimeout)
	}
	return p, d, nil
}

func (run) Acts(args json.RawMessage) ([]Act, error) {
	p, _, err := parseRun(args)
	if err != nil {
		return nil, err
	}
	if p.Shell != "" {
		return []Act{{Act: policy.ActExec, Target: "sh -c " + p.Shell, Shell: p.Shell}}, nil
	}
	return []Act{{Act: policy.ActExec, Target: strings.Join(p.Argv, " "), Argv: p.Argv}}, nil
}

// netProxyNote says what a command's network was when it had the run's
// proxy (docs/policy.md#the-network-proxy).
const netProxyNote = "network: only through the run's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY); a host the user did not allow is refused with an HTTP 403 that names it; a client that ignores the proxy variables cannot connect\n"

// narrowHint heads a result whose output was cut.
const narrowHint = "the output was longer than 10 KiB: below are its first and last 5 KiB, with the bytes left out marked where they were. " +
	"To see the middle, narrow the command: filter it (| grep -n PATTERN, | sed -n 'A,Bp'), pick fewer tests (-run NAME, -k NAME), " +
	"make it quieter (-q, no -v), or write the output to a file and read parts of it in the same shell line (the sandbox discards files after the run).\n"

func (t run) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	p, d, err := parseRun(args)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if t.sb == nil {
		return Errorf("run: no sandbox is configured, commands cannot run"), nil
	}
	// What read_file would refuse or ask about, the command reads empty.
	withheld, werr := Withheld(t.cs, t.reads)
	res, err := t.sb.Exec(ctx, &contain.Request{
		Argv: p.Argv, Shell: p.Shell, Root: t.cs.Root().Dir(), Withheld: withheld,
		Changes: t.cs.Changes(), Timeout: d, OutputLimit: RunKeep,
	})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Errorf("run: sandbox: %v", err), nil
	}
	var b strings.Builder
	if werr != nil {
		fmt.Fprintf(&b, "[read policy: %v]\n", werr)
	}
	if note := res.WithheldNote(); note != "" {
		fmt.Fprintf(&b, "[%s]\n", note)
	}
	switch {
	case res.CapHit == "output":
		b.WriteString("stopped: it wrote more than a gigabyte of output (a runaway); narrow the command\n")
	case res.CapHit != "":
		fmt.Fprintf(&b, "killed: %s limit hit\n", res.CapHit)
	case res.Signal != "":
		fmt.Fprintf(&b, "killed by signal %s\n", res.Signal)
	default:
		fmt.Fprintf(&b, "exit code %d\n", res.ExitCode)
	}
	b.WriteString(res.Containment() + "\n")
	if res.Mechanism(contain.MechanismNetProxy) {
		b.WriteString(netProxyNote)
	}
	if res.Truncated {
		b.WriteString(narrowHint)
	}
	b.Write(res.Output)
	return Result{Content: clip(b.String()), IsError: !res.Passed(0)}, nil
}
