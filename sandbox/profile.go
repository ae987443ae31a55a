package sandbox

import (
	"fmt"
	"sort"
	"strings"
)

// macProfile is a generated sandbox-exec (Seatbelt) profile with the paths
// it names passed as -D parameters, so no path is ever spliced into the
// profile's own syntax.
type macProfile struct {
	Text   string
	Params map[string]string // name → value, given as -D name=value
}

// buildMacProfile generates the profile for a run: reads allowed except
// the masked secrets, writes only to the writable roots, the run's private
// temp dir and a few devices, network denied unless asked, signals only
// within the sandbox.
func buildMacProfile(writable, masked []string, tmp string, network bool) macProfile {
	p := macProfile{Params: map[string]string{}}
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	b.WriteString("(deny file-write*)\n(allow file-write*\n")
	b.WriteString("    (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\")\n")
	b.WriteString("    (regex #\"^/dev/fd/[0-9]+$\")\n")
	roots := append([]string{tmp}, writable...)
	for i, w := range roots {
		name := fmt.Sprintf("WRITABLE_%d", i)
		p.Params[name] = w
		fmt.Fprintf(&b, "    (subpath (param %q))\n", name)
	}
	b.WriteString(")\n")
	if len(masked) > 0 {
		b.WriteString("(deny file-read* file-write*\n")
		for i, m := range masked {
			name := fmt.Sprintf("MASKED_%d", i)
			p.Params[name] = m
			fmt.Fprintf(&b, "    (subpath (param %q))\n", name)
		}
		b.WriteString(")\n")
	}
	if !network {
		b.WriteString("(deny network*)\n")
	}
	b.WriteString("(deny signal)\n(allow signal (target same-sandbox))\n")
	p.Text = b.String()
	return p
}

// args returns sandbox-exec's arguments for the profile, parameters in a
// stable order.
func (p macProfile) args() []string {
	names := make([]string, 0, len(p.Params))
	for n := range p.Params {
		names = append(names, n)
	}
	sort.Strings(names)
	args := []string{"-p", p.Text}
	for _, n := range names {
		args = append(args, "-D", n+"="+p.Params[n])
	}
	return args
}
