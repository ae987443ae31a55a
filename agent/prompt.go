package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/agent/policy"
	"github.com/ioh-lsp/ioh-lsp/agent/tools"
)

// maxContextBytes caps the context files' content in the system prompt.
const maxContextBytes = 64 << 10

// systemPrompt is the stable prefix of every request: role, goal,
// constraints, scope, checks, tools and the context files. It depends only
// on the contract and the workspace at the run's start, so every request
// of a run shares it byte for byte (cacheable).
func (a *agentRun) systemPrompt(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("You are a coding agent working in a software workspace through tools. ")
	b.WriteString("Your edits go into a pending change set (reads see it); nothing reaches the real files until the change is verified and approved. ")
	b.WriteString("Tool failures and policy denials come back as results: read them and adapt. When the task is done, call finish with a short summary.\n\n")
	fmt.Fprintf(&b, "# Goal\n%s\n", a.c.Goal)
	if len(a.c.Constraints) > 0 {
		b.WriteString("\n# Constraints\n")
		for _, c := range a.c.Constraints {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	if len(a.c.Scope.Write) > 0 {
		fmt.Fprintf(&b, "\n# Scope\nYou may write only paths matching: %s\n", strings.Join(a.c.Scope.Write, ", "))
	}
	if len(a.c.Verify.Protect) > 0 {
		fmt.Fprintf(&b, "\nThese files are protected (you may not write them): %s\n", strings.Join(a.c.Verify.Protect, ", "))
	}
	if len(a.c.Verify.Checks) > 0 {
		b.WriteString("\n# Verification\nWhen you call finish, these checks run in a sandbox over the workspace with your changes; all must pass:\n")
		for _, c := range a.c.Verify.Checks {
			cmd := c.Shell
			if cmd == "" {
				cmd = strings.Join(c.Run, " ")
			}
			fmt.Fprintf(&b, "- %s: %s (expect exit %d)\n", c.Name, cmd, c.ExpectExit)
		}
	}
	b.WriteString("\n# Tools\n")
	for _, name := range sortedToolNames(a.tools) {
		fmt.Fprintf(&b, "- %s: %s\n", name, a.tools[name].Spec().Description)
	}
	if files := a.contextFiles(ctx); files != "" {
		b.WriteString("\n# Context files\n")
		b.WriteString(files)
	}
	return b.String()
}

// contextFiles expands the contract's context globs (as of the run's
// start) and returns their content, capped. Each file is judged as a
// read_file of it would be (checkRead): a contract, which a repository
// may have written, cannot put a file the policy guards (.env, keys, a
// denied path) into the prompt by naming it; such a file is named, not
// shown, so the model can read_file it and the user be asked then.
func (a *agentRun) contextFiles(ctx context.Context) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, g := range a.c.Context {
		paths, err := a.cs.Find(ctx, g)
		if err != nil || len(paths) == 0 {
			fmt.Fprintf(&b, "(no file matches %s)\n", g)
			continue
		}
		for _, p := range paths {
			if seen[p] {
				continue
			}
			seen[p] = true
			resolved, err := a.cs.Key(p)
			if err != nil {
				continue
			}
			switch v := a.checkRead(p, resolved); v.Effect {
			case policy.Deny:
				fmt.Fprintf(&b, "## %s\n(not shown: the policy does not let you read it)\n", p)
				continue
			case policy.Ask:
				fmt.Fprintf(&b, "## %s\n(not shown: reading it needs the user's approval; use read_file to ask)\n", p)
				continue
			}
			data, err := a.cs.ReadFile(resolved)
			if err != nil {
				continue
			}
			if b.Len()+len(data) > maxContextBytes {
				fmt.Fprintf(&b, "## %s\n(not shown: the context limit is reached; use read_file)\n", p)
				continue
			}
			fmt.Fprintf(&b, "## %s\n```\n%s\n```\n", p, strings.TrimRight(string(data), "\n"))
		}
	}
	return b.String()
}

func firstMessage(goal string) string {
	return "Task: " + goal + "\nWork through the tools; call finish when the task is done."
}

func sortedToolNames(m map[string]tools.Tool) []string {
	specs := tools.Specs(m)
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}
