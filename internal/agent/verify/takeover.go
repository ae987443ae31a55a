package verify

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Per-test evidence is the test runner's own account, and the runner
// shares its process with the code under test: `go test` reads what the
// test binary prints, pytest writes its JUnit report from the process
// that imported the code. Code that ends that process behind the runner's
// back (syscall.Exit, os._exit, exec), reaches the runner's report or the
// go command's output through /proc, or changes the runner's memory can
// print or write a passing account of tests that fail; the sandbox tests
// in forge_sandbox_test.go show each. The evidence cannot rule that out,
// so a change that adds such code to the code under test is marked as
// touching its checks: it waits for a person instead of being applied
// automatically. (Test files, init code and the runners' configuration
// are marked already, see selftouch.go.)

// goTakeover returns why new (the change's content of the Go file p, old
// its content before) adds code that can end or take over the test
// process or forge its results: imports of syscall, x/sys, unsafe, cgo,
// plugin, os/exec or testing (outside a test file: code that knows it is
// under test), //go:linkname directives, and string constants naming
// /proc or spelling test2json framing. nil when it adds none, or when p
// does not parse (goInitCode reports that).
func goTakeover(p string, old, new []byte) []string {
	if marked(p) {
		return nil
	}
	now, err := goPowers(p, new)
	if err != nil {
		return nil
	}
	before, _ := goPowers(p, old)
	return takeoverReason(p, before, now)
}

// marked reports whether a change to p is marked whatever it holds: a
// test file, or the runners' configuration and installed code.
func marked(p string) bool { return matchAny(p, testFiles) || matchAny(p, checkConfig) }

// goForbiddenImports are the packages through which Go code can end its
// process without the testing package noticing (os.Exit during a test
// panics under go test's -test.paniconexit0; syscall.Exit does not),
// replace it (exec), write another process's descriptors or memory, or
// rewrite the testing package's state.
var goForbiddenImports = &lazyValue[map[string]string]{build: func() map[string]string {
	return map[string]string{
		"syscall":                  "imports syscall (raw exit, exec, kill)",
		"golang.org/x/sys/unix":    "imports golang.org/x/sys/unix (raw exit, exec, kill)",
		"golang.org/x/sys/windows": "imports golang.org/x/sys/windows (raw exit, process control)",
		"unsafe":                   "imports unsafe (can rewrite the test runner's memory)",
		"C":                        "uses cgo (C code can end or rewrite the process)",
		"plugin":                   "imports plugin (loads code at run time)",
		"os/exec":                  "imports os/exec (a child process can write the go command's output)",
		"testing":                  "imports testing outside a test file (code that can tell it is under test)",
	}
}}

// goPowers lists a Go file's takeover findings, one entry per occurrence.
func goPowers(p string, src []byte) ([]string, error) {
	if src == nil {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, p, src, goparser.ParseComments|goparser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	osName := ""
	for _, im := range f.Imports {
		ip, _ := strconv.Unquote(im.Path.Value)
		if why, ok := goForbiddenImports.get()[ip]; ok {
			out = append(out, why)
		}
		if ip == "os" {
			osName = "os"
			if im.Name != nil {
				osName = im.Name.Name
			}
		}
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				out = append(out, "has a //go:linkname directive (reaches unexported runtime and testing internals)")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && osName != "" && x.Name == osName {
				switch sel.Sel.Name {
				case "StartProcess":
					out = append(out, "calls os.StartProcess (a child process can write the go command's output)")
				case "Getppid":
					out = append(out, "calls os.Getppid (finds the go command, whose output carries the results)")
				}
			}
			return true
		}
		if bin, ok := n.(*ast.BinaryExpr); ok && bin.Op == token.ADD {
			// "/pr" + "oc": the concatenation of constants, as a whole
			if s, ok := constString(bin); ok {
				if why := forgeryText(s); why != "" {
					out = append(out, why)
				}
				return false
			}
			return true
		}
		if s, ok := constString(n); ok {
			if why := forgeryText(s); why != "" {
				out = append(out, why)
			}
		}
		return true
	})
	return out, nil
}

// constString evaluates a string or rune literal, or a sum of them.
func constString(n ast.Node) (string, bool) {
	switch n := n.(type) {
	case *ast.BasicLit:
		if n.Kind != token.STRING && n.Kind != token.CHAR {
			return "", false
		}
		s, err := strconv.Unquote(n.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return constString(n.X)
	case *ast.BinaryExpr:
		if n.Op != token.ADD {
			return "", false
		}
		a, ok := constString(n.X)
		if !ok {
			return "", false
		}
		b, ok := constString(n.Y)
		return a + b, ok
	}
	return "", false
}

// forgeryText names what a string constant spells that the code under
// test has no business printing or opening: the test2json framing byte,
// test2json events, go test's result lines, /proc.
func forgeryText(s string) string {
	switch {
	case strings.Contains(s, "/proc"):
		return "names /proc (other processes' output, memory, command lines)"
	case strings.ContainsRune(s, 0x16):
		return "spells the test2json framing byte \\x16"
	case strings.Contains(s, `"Action"`):
		return "spells a test2json event"
	case strings.Contains(s, "--- PASS") || strings.Contains(s, "=== RUN") || strings.Contains(s, "--- SKIP"):
		return "spells a go test result line"
	}
	return ""
}

// pyTakeoverWords are the names through which Python code can end the
// interpreter behind pytest's back (os._exit skips the session's end and
// its report; SystemExit from sys.exit is reported as a failure), replace
// it, start processes that outlive its report, reach /proc, or find and
// rewrite pytest's own objects. (A signal or abort ends it with a failing
// status, which is no forgery.) Python can spell any of them indirectly; the
// indirect spellings (__import__, importlib, eval, exec, getattr on a
// module's namespace) are on the list too. Matched on whole words.
var pyTakeoverWords = []string{
	"_exit", "execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe",
	"spawnv", "spawnve", "spawnl", "spawnle", "spawnvp", "spawnlp", "posix_spawn", "posix_spawnp",
	"fork", "forkpty", "getppid",
	"subprocess", "multiprocessing", "pty", "posix", "ctypes", "cffi",
	"_pytest", "pytest", "junitxml", "gc", "_getframe", "inspect", "__import__", "importlib",
	"eval", "exec", "builtins", "__builtins__", "argv", "attrgetter",
	"f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame", "__traceback__",
	"__globals__", "__subclasses__", "atexit", "orig_argv", "proc",
}

// pyIndirect finds a module's attribute looked up by a computed name
// (getattr(os, "_ex" + "it"), vars(os)[…], os.__dict__[…]), which the
// word list cannot see; pySystem os.system and os.popen (the bare words
// are too common: platform.system()).
var (
	pyIndirect = &lazyRE{pat: `\b(getattr|vars)\(\s*(os|sys|posix|nt|subprocess|builtins|signal|ctypes|atexit)\b|\b(os|sys|posix|nt|subprocess|builtins|signal|ctypes|atexit)\s*\.\s*__dict__`}
	pySystem   = &lazyRE{pat: `\bos\s*\.\s*(system|popen)\b|\bfrom\s+(os|posix)\s+import\b.*\b(system|popen)\b`}
)

// pyTakeover is goTakeover for a Python module (not a test module or
// conftest, which are marked as test files): the words of
// pyTakeoverWords and /proc in its code and strings, lines starting with
// # left out.
func pyTakeover(p string, old, new []byte) []string {
	if marked(p) {
		return nil
	}
	return takeoverReason(p, pyPowers(old), pyPowers(new))
}

func pyPowers(src []byte) []string {
	var out []string
	words := map[string]bool{}
	for _, w := range pyTakeoverWords {
		words[w] = true
	}
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.Contains(t, "/proc") {
			out = append(out, "names /proc (other processes' output, memory, command lines)")
		}
		if strings.Contains(t, "sys.modules") {
			out = append(out, "uses sys.modules")
		}
		if pyIndirect.MatchString(t) {
			out = append(out, "looks up a module attribute by a computed name")
		}
		if pySystem.MatchString(t) {
			out = append(out, "uses os.system or os.popen")
		}
		for _, w := range identifiers(t) {
			if words[w] {
				out = append(out, "uses "+w)
			}
		}
	}
	return out
}

// identifiers splits a line into its identifier-like words.
func identifiers(line string) []string {
	return strings.FieldsFunc(line, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

// takeoverReason is the one reason line for a file whose findings grew
// from before to now; nil when they did not.
func takeoverReason(p string, before, now []string) []string {
	seen := map[string]int{}
	for _, b := range before {
		seen[b]++
	}
	added := map[string]bool{}
	for _, n := range now {
		if seen[n] > 0 {
			seen[n]--
			continue
		}
		added[n] = true
	}
	if len(added) == 0 {
		return nil
	}
	list := make([]string, 0, len(added))
	for a := range added {
		list = append(list, a)
	}
	sort.Strings(list)
	if len(list) > 4 {
		list = append(list[:4], fmt.Sprintf("%d more", len(list)-4))
	}
	return []string{fmt.Sprintf("adds code to %s that could end the test process or write its results itself, which per-test evidence cannot rule out: %s", path.Clean(p), strings.Join(list, "; "))}
}

// jsTakeoverPatterns are the ways JavaScript and TypeScript code can end
// its process behind the test runner's back (node's runner reads each
// test file's results from that file's own process), start or reach
// other processes, or run computed code.
var jsTakeoverPatterns = []struct {
	re  *lazyRE
	why string
}{
	{&lazyRE{pat: `\bprocess\s*\.\s*(exit|reallyExit|kill|abort|binding|_linkedBinding|dlopen)\b`}, "uses process.exit, kill, binding or dlopen"},
	{&lazyRE{pat: `\bprocess\s*\[`}, "looks up a process attribute by a computed name"},
	{&lazyRE{pat: `child_process|worker_threads|node:test|node:vm|\brequire\(\s*['"]vm['"]|from\s+['"]vm['"]`}, "imports child_process, worker_threads, vm or the test runner"},
	{&lazyRE{pat: `/proc`}, "names /proc (other processes' output, memory, command lines)"},
	{&lazyRE{pat: `\beval\s*\(|\bnew\s+Function\s*\(`}, "runs computed code (eval, new Function)"},
}

// jsTakeover is goTakeover for JavaScript and TypeScript sources that are
// not test files; lines starting with // are left out.
func jsTakeover(p string, old, new []byte) []string {
	if marked(p) {
		return nil
	}
	return takeoverReason(p, jsPowers(old), jsPowers(new))
}

func jsPowers(src []byte) []string {
	var out []string
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		for _, p := range jsTakeoverPatterns {
			if p.re.MatchString(t) {
				out = append(out, p.why)
			}
		}
	}
	return out
}

// isJS reports whether p is a JavaScript or TypeScript source.
func isJS(p string) bool {
	switch path.Ext(p) {
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return true
	}
	return false
}

// compiledCode are files a toolchain loads as code without the source the
// marks read: Python byte code and extension modules (an extension module
// is found before the .py of the same name), Go assembly and object
// files, shared and static libraries.
var compiledCode = []string{
	"**/*.pyc", "**/__pycache__/**", "**/*.so", "**/*.so.*", "**/*.pyd", "**/*.dylib", "**/*.dll",
	"**/*.s", "**/*.S", "**/*.syso", "**/*.o", "**/*.a",
}

// rsTakeoverPatterns are goTakeover's for Rust outside its inline tests:
// with cargo-nextest each test is a process whose exit status is its
// result, so std::process::exit(0) in the code under test is a pass.
var rsTakeoverPatterns = []struct {
	re  *lazyRE
	why string
}{
	{&lazyRE{pat: `\bprocess\s*::\s*(exit|abort|Command)\b|\bstd\s*::\s*process\b|\bCommand\s*::\s*new\b`}, "uses std::process (exit, Command)"},
	{&lazyRE{pat: `\blibc\s*::|\bnix\s*::|\bextern\s+"C"|\bextern\s+crate\s+libc\b`}, "calls C or libc"},
	{&lazyRE{pat: `\bunsafe\b`}, "has unsafe code"},
	{&lazyRE{pat: `\b(global_)?asm!`}, "has inline assembly"},
	{&lazyRE{pat: `/proc`}, "names /proc (other processes' output, memory, command lines)"},
}

// rsTakeover is goTakeover for a Rust source, read up to its first
// #[cfg(test)] (the inline tests are marked as tests).
func rsTakeover(p string, old, new []byte) []string {
	if marked(p) {
		return nil
	}
	return takeoverReason(p, rsPowers(old), rsPowers(new))
}

func rsPowers(src []byte) []string {
	s := string(src)
	if i := strings.Index(s, "#[cfg(test)]"); i >= 0 {
		s = s[:i]
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		for _, p := range rsTakeoverPatterns {
			if p.re.MatchString(t) {
				out = append(out, p.why)
			}
		}
	}
	return out
}
