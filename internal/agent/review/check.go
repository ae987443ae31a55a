package review

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// Review is the review of one change: each file's group, and why the
// change must wait for a person however it is approved.
type Review struct {
	groups map[string]Group
	// Hold says, one line per file, why a person must look at the change
	// before it is applied: it writes a file that runs on the user's
	// machine later, or adds code that reads its environment. Automatic
	// approval never applies a change with a Hold.
	Hold []string
}

// Check reviews changes to the workspace at root. base returns a file's
// content before the change (nil for a new file). Besides Of's groups, a
// file under one of the paths the host's git runs from in this work tree
// (workspace.HostRunPaths: the configured hooks directory, included
// configuration files, ...) runs code, and a code file (not a test) whose
// added lines read the environment introspects. When git's configuration
// cannot be read whole, every change is held: a hooks directory may be
// missing from the list.
func Check(root string, changes []workspace.Change, base func(rel string) []byte) *Review {
	r := &Review{groups: map[string]Group{}}
	hostRun, err := workspace.HostRunPaths(root)
	if err != nil {
		r.Hold = append(r.Hold, fmt.Sprintf("git's configuration could not be read whole, so the files git runs are unknown (%v)", err))
	}
	for _, c := range changes {
		g := Of(c.Path)
		if under(c.Path, hostRun) {
			g = RunsCode
		}
		if g != RunsCode && c.Op != workspace.OpDelete {
			old := base(c.Path)
			if c.From != "" {
				old = base(c.From)
			}
			if hit := introspection(c.Path, old, c.Content); hit != "" {
				g = Introspects
				r.Hold = append(r.Hold, c.Path+": "+hit)
			}
		}
		if g == RunsCode {
			r.Hold = append(r.Hold, c.Path+": runs on your machine later (build script, CI, hook, editor or tool configuration)")
		}
		r.groups[c.Path] = g
	}
	return r
}

// Of is the group of rel in this change (Of's for a file the change does
// not hold).
func (r *Review) Of(rel string) Group {
	if g, ok := r.groups[rel]; ok {
		return g
	}
	return Of(rel)
}

// under reports whether rel is one of paths or lies below one,
// case-insensitively (a case-insensitive file system stores .Husky as
// .husky).
func under(rel string, paths []string) bool {
	lower := strings.ToLower(rel)
	for _, p := range paths {
		p = strings.ToLower(strings.TrimSuffix(p, "/"))
		if lower == p || strings.HasPrefix(lower, p+"/") {
			return true
		}
	}
	return false
}

// introspectors are, per language (by extension), the calls and values
// through which code learns about the process and the machine it runs
// on: environment variables, arguments, host and user names, the home,
// temporary and working directories, whether it runs under a test; an
// import of such a module under another name (so the calls read
// differently); and, in every language, the process's own /proc files
// and the sandbox's names.
var introspectors = sync.OnceValue(func() map[string]*regexp.Regexp {
	const any = `|/proc/(self|thread-self|[0-9]+)/|ioh-landlock|ioh-sandbox|/tmp/home\b`
	return map[string]*regexp.Regexp{
		"go": regexp.MustCompile(`\bos\.(Getenv|LookupEnv|Environ|ExpandEnv|Args|Hostname|UserHomeDir|UserCacheDir|UserConfigDir|TempDir|Getwd|Executable)\b|` +
			`\bsyscall\.(Getenv|Environ)\b|\bflag\.Lookup\(|\bruntime\.Callers?\(|\btesting\.Testing\(|\bos/user\b|\buser\.Current\(|` +
			`\b[A-Za-z_]\w*\s+"(os|syscall|flag|runtime)"` + any),
		"py": regexp.MustCompile(`\bos\.(environ|getenv|getcwd|getlogin|uname)\b|\bos\.path\.expanduser\b|\bsys\.argv\b|\bsocket\.gethostname\b|` +
			`\bgetpass\b|\btempfile\.gettempdir\b|\bplatform\.node\b|\bPath\.(home|cwd)\(|\bfrom os import\b.*\b(environ|getenv)\b|` +
			`\bimport\s+(os|sys|socket|tempfile|platform)\s+as\b|__import__\(` + any),
		"js": regexp.MustCompile(`\bprocess\.(env|argv|cwd)\b|\bos\.(hostname|homedir|tmpdir|userInfo)\(|\bimport\.meta\.env\b|\b(Deno|Bun)\.env\b|` +
			`\brequire\(\s*['"](node:)?(os|process)['"]\s*\)|\bfrom\s+['"](node:)?(os|process)['"]` + any),
		"rs": regexp.MustCompile(`\benv::(var|var_os|vars|args|args_os|temp_dir|current_dir|home_dir)\b|\benv!\(|\boption_env!\(` + any),
	}
})

// languageOf is the introspectors key of a file extension ("" for none).
func languageOf(ext string) string {
	switch ext {
	case ".go", ".py", ".rs":
		return ext[1:]
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return "js"
	}
	return ""
}

// introspection names the first added line of a code file (not a test)
// that introspects, as "line N reads its environment (os.Getenv)", or "".
func introspection(rel string, old, new []byte) string {
	re := introspectors()[languageOf(strings.ToLower(path.Ext(rel)))]
	if re == nil || isTest(rel) {
		return ""
	}
	before := map[string]int{}
	for _, l := range strings.Split(string(old), "\n") {
		before[strings.TrimSpace(l)]++
	}
	for i, l := range strings.Split(string(new), "\n") {
		t := strings.TrimSpace(l)
		if before[t] > 0 {
			before[t]-- // an unchanged line
			continue
		}
		for _, m := range re.FindAllString(l, -1) {
			if strings.HasPrefix(m, "import ") {
				continue // Go's plain `import "os"`, not an alias
			}
			return fmt.Sprintf("line %d reads its environment (%s), which differs between the sandbox and your machine", i+1, strings.TrimRight(m, "("))
		}
	}
	return ""
}
