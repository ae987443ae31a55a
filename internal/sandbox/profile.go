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

// macDevices are the device files a command may read and write.
var macDevices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper"}

// macView is what a macOS run may touch, computed like the Linux tiers'
// read view (macReadView, profile_view.go).
type macView struct {
	// Read are the read view's roots, resolved: nothing else is readable
	// beyond file metadata (stat, which path lookups need).
	Read []string
	// Deny are never readable nor writable, even inside a Read or
	// Writable root: the masks, /etc's secrets, this program's state and
	// config.
	Deny []string
	// Writable are the writable roots, the run's private temp dir first.
	Writable []string
	Network  bool
}

// buildMacProfile generates the profile for a run: reads deny by default
// (only the read view, plus every path's metadata), writes only to the
// writable roots and a few devices, the denied paths neither, network
// denied unless asked, signals only within the sandbox. Seatbelt applies
// the last rule that matches, so each later block narrows or widens the
// ones before it.
func buildMacProfile(v macView) macProfile {
	p := macProfile{Params: map[string]string{}}
	var b strings.Builder
	paths := func(prefix string, ps []string) {
		for i, path := range ps {
			name := fmt.Sprintf("%s_%d", prefix, i)
			p.Params[name] = path
			fmt.Fprintf(&b, "    (subpath (param %q))\n", name)
		}
	}
	devices := func() {
		for _, d := range macDevices {
			fmt.Fprintf(&b, "    (literal %q)\n", d)
		}
		b.WriteString("    (regex #\"^/dev/fd/[0-9]+$\")\n")
	}
	b.WriteString("(version 1)\n(allow default)\n")
	b.WriteString("(deny file-read*)\n(allow file-read-metadata)\n")
	b.WriteString("(allow file-read*\n    (literal \"/\")\n")
	devices()
	paths("READ", v.Read)
	b.WriteString(")\n")
	b.WriteString("(deny file-write*)\n(allow file-write*\n")
	devices()
	paths("WRITABLE", v.Writable)
	b.WriteString(")\n")
	if len(v.Deny) > 0 {
		b.WriteString("(deny file-read* file-write*\n")
		paths("DENY", v.Deny)
		b.WriteString(")\n")
	}
	if !v.Network {
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
