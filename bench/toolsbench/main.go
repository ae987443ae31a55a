// Command toolsbench measures what the agent's workspace tools cost a
// model and how robust its edits are, on a Go corpus (GOROOT/src), with a
// fixed seed, through the real tools (agent/tools over a
// workspace.ChangeSet; nothing is written to disk). bench/tools.sh runs it.
//
// Localising and reading: for each sampled function, a policy that knows
// its name and package and follows only what the results say greps for
// its declaration, reads from the line grep gave (100 lines a call) and
// continues with the offset each window names until the function's
// closing brace was shown. The reference, measured in the same run, is
// the old read_file: the whole file, cut at 64 KiB with no hint where.
// Tokens are bytes/4.
//
// Edit robustness: sampled 3-line edits, each exact and then with one
// slip (tabs written as spaces, the file in CRLF, a trailing space),
// through edit_file; the reference is the old exact-only match (old
// applies iff it occurs once byte for byte). An edit counts as applied
// when the file then equals the exact edit's result; any other change is
// "wrong" and fails the bench.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/tools"
	"github.com/ioh-lsp/ioh-lsp/internal/workspace"
)

// oldMaxResult is the old read_file's only bound: 64 KiB, cut mid-line.
const oldMaxResult = 64 << 10

// readLimit is the lines the localising policy asks for per read.
const readLimit = 100

type fn struct {
	path, name, recv string
	start, end       int // 1-based lines of the declaration (doc comment excluded)
	endOff           int // byte offset just past the closing brace
	size             int // file size
}

func main() {
	corpus := flag.String("corpus", "", "Go source tree (GOROOT/src)")
	funcs := flag.Int("funcs", 500, "functions to localise and read")
	edits := flag.Int("edits", 2000, "3-line edits to try per slip")
	seed := flag.Int64("seed", 1, "sampling seed")
	flag.Parse()
	if err := run(*corpus, *funcs, *edits, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "toolsbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	ctx context.Context
	cs  *workspace.ChangeSet
	set map[string]tools.Tool
	rng *rand.Rand
}

func run(corpus string, nFuncs, nEdits int, seed int64) error {
	root, err := workspace.NewRoot(corpus)
	if err != nil {
		return err
	}
	b := &bench{ctx: context.Background(), cs: workspace.NewChangeSet(root), rng: rand.New(rand.NewSource(seed))}
	b.set = tools.Set(tools.Env{Changes: b.cs}, nil)
	files, err := b.cs.Find(b.ctx, "**/*.go")
	if err != nil {
		return err
	}
	files = slices.DeleteFunc(files, func(p string) bool {
		return strings.HasSuffix(p, "_test.go") || strings.Contains("/"+p, "/testdata/")
	})
	all := b.functions(files)
	fmt.Printf("corpus: %s, %d Go files (tests and testdata left out), %d functions, seed %d; tokens = bytes/4\n\n", corpus, len(files), len(all), seed)
	if err := b.localise(all, nFuncs); err != nil {
		return err
	}
	fmt.Println()
	return b.editRobustness(files, nEdits)
}

// functions parses every file and lists its function declarations.
func (b *bench) functions(files []string) []fn {
	var out []fn
	for _, p := range files {
		src, err := b.cs.ReadFile(p)
		if err != nil {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			x := fn{path: p, name: fd.Name.Name, start: fset.Position(fd.Pos()).Line, end: fset.Position(fd.End()).Line,
				endOff: fset.Position(fd.End()).Offset, size: len(src)}
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				x.recv = recvName(fd.Recv.List[0].Type)
			}
			out = append(out, x)
		}
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

func (b *bench) call(tool string, a any) tools.Result {
	raw, err := json.Marshal(a)
	if err != nil {
		panic(err)
	}
	r, err := b.set[tool].Call(b.ctx, raw)
	if err != nil {
		return tools.Result{Content: err.Error(), IsError: true}
	}
	return r
}

var (
	grepHit    = regexp.MustCompile(`(?m)^([^:\n]+):(\d+):`)
	continueAt = regexp.MustCompile(`continue with offset=(\d+)`)
	numbered   = regexp.MustCompile(`(?m)^ *(\d+)\t`)
)

// localise samples functions and follows the results' hints to read
// each, against the whole-file read.
func (b *bench) localise(all []fn, n int) error {
	var newTok, oldTok, calls []int
	newReach, oldReach := 0, 0
	for i := 0; i < n; i++ {
		f := all[b.rng.Intn(len(all))]
		tok, c, ok := b.follow(f)
		newTok, calls = append(newTok, tok), append(calls, c)
		if ok {
			newReach++
		}
		shown := min(f.size, oldMaxResult)
		oldTok = append(oldTok, shown/4)
		if f.endOff <= oldMaxResult {
			oldReach++
		}
	}
	fmt.Printf("localise and read %d sampled functions  %14s %14s %8s\n", n, "old: whole", "new: hints", "new/old")
	row := func(name string, o, nw float64, unit string) {
		fmt.Printf("  %-36s %13.0f%s %13.0f%s %8.2f\n", name, o, unit, nw, unit, nw/o)
	}
	row("p50 tokens", pct(oldTok, 50), pct(newTok, 50), " ")
	row("p90 tokens", pct(oldTok, 90), pct(newTok, 90), " ")
	row("mean tokens", mean(oldTok), mean(newTok), " ")
	fmt.Printf("  %-36s %13.1f%% %13.1f%%\n", "reachable through the results", 100*float64(oldReach)/float64(n), 100*float64(newReach)/float64(n))
	fmt.Printf("  %-36s %14s %14.0f\n", "calls p50 (grep + reads)", "1", pct(calls, 50))
	fmt.Printf("  goals: p50 <= 1,500 tokens: %v; 100%% reachable: %v\n", pct(newTok, 50) <= 1500, newReach == n)
	return nil
}

// follow localises f by grep and reads it window by window; it returns
// the tokens fed back, the calls made and whether every line of f was
// shown.
func (b *bench) follow(f fn) (tokens, calls int, ok bool) {
	pat := `^func ` + regexp.QuoteMeta(f.name) + `[\[(]`
	if f.recv != "" {
		pat = `^func \([^)]*\b` + regexp.QuoteMeta(f.recv) + `\b[^)]*\) ` + regexp.QuoteMeta(f.name) + `[\[(]`
	}
	g := b.call("grep", map[string]any{"pattern": pat, "glob": path.Dir(f.path) + "/*.go"})
	bytes, calls := len(g.Content), 1
	line := 0
	for _, m := range grepHit.FindAllStringSubmatch(g.Content, -1) {
		if m[1] == f.path {
			line, _ = strconv.Atoi(m[2])
			break
		}
	}
	if line == 0 {
		return bytes / 4, calls, false
	}
	seen := map[int]bool{}
	offset := line
	for calls < 30 {
		r := b.call("read_file", map[string]any{"path": f.path, "offset": offset, "limit": readLimit})
		bytes += len(r.Content)
		calls++
		for _, m := range numbered.FindAllStringSubmatch(r.Content, -1) {
			k, _ := strconv.Atoi(m[1])
			seen[k] = true
		}
		if seen[f.end] || r.IsError {
			break
		}
		m := continueAt.FindStringSubmatch(r.Content)
		if m == nil {
			break
		}
		offset, _ = strconv.Atoi(m[1])
	}
	for k := f.start; k <= f.end; k++ {
		if !seen[k] {
			return bytes / 4, calls, false
		}
	}
	return bytes / 4, calls, true
}

// slip is one way a model's old text differs from the file.
type slip struct {
	name string
	// apply returns the file as the trial sees it and old/new as the
	// model writes them, and the expected file; ok false when the window
	// cannot carry this slip (no leading tab, say).
	apply func(file, old, new string, rng *rand.Rand) (f, o, n, want string, ok bool)
}

var slips = []slip{
	{"exact", func(file, old, new string, _ *rand.Rand) (string, string, string, string, bool) {
		return file, old, new, strings.Replace(file, old, new, 1), true
	}},
	{"tabs written as spaces", func(file, old, new string, _ *rand.Rand) (string, string, string, string, bool) {
		if !strings.Contains("\n"+old, "\n\t") {
			return "", "", "", "", false
		}
		return file, tabsToSpaces(old), tabsToSpaces(new), strings.Replace(file, old, new, 1), true
	}},
	{"CRLF file", func(file, old, new string, _ *rand.Rand) (string, string, string, string, bool) {
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
		return crlf(file), old, new, crlf(strings.Replace(file, old, new, 1)), true
	}},
	{"trailing space", func(file, old, new string, rng *rand.Rand) (string, string, string, string, bool) {
		lines := strings.SplitAfter(old, "\n")
		k := rng.Intn(3)
		lines[k] = strings.TrimSuffix(lines[k], "\n") + " \n"
		return file, strings.Join(lines, ""), new, strings.Replace(file, old, new, 1), true
	}},
}

func tabsToSpaces(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		t := len(l) - len(strings.TrimLeft(l, "\t"))
		lines[i] = strings.Repeat("    ", t) + l[t:]
	}
	return strings.Join(lines, "")
}

// editRobustness tries n sampled 3-line edits for each slip.
func (b *bench) editRobustness(files []string, n int) error {
	type tally struct{ tried, newOK, oldOK, wrong, refusedAmbiguous int }
	res := make([]tally, len(slips))
	ambiguousExact, sampled := 0, 0
	for got := 0; got < n; {
		p := files[b.rng.Intn(len(files))]
		data, err := b.cs.ReadFile(p)
		if err != nil || strings.Contains(string(data), "\r") {
			continue
		}
		file := string(data)
		lines := strings.SplitAfter(file, "\n")
		if len(lines) < 4 {
			continue
		}
		i := b.rng.Intn(len(lines) - 3)
		old := strings.Join(lines[i:i+3], "")
		if strings.TrimSpace(lines[i+1]) == "" || !strings.HasSuffix(old, "\n") {
			continue
		}
		sampled++
		if strings.Count(file, old) != 1 {
			ambiguousExact++ // the ambiguity error's path, not this measure's
			continue
		}
		new := lines[i] + strings.TrimSuffix(lines[i+1], "\n") + " // edited\n" + lines[i+2]
		got++
		for k, s := range slips {
			f, o, nw, want, ok := s.apply(file, old, new, b.rng)
			if !ok {
				continue
			}
			res[k].tried++
			if strings.Count(f, o) == 1 {
				res[k].oldOK++
			}
			if err := b.cs.WriteFile(p, []byte(f)); err != nil {
				return err
			}
			r := b.call("edit_file", map[string]any{"path": p, "old": o, "new": nw})
			after, _ := b.cs.ReadFile(p)
			switch {
			case string(after) == want && !r.IsError:
				res[k].newOK++
			case string(after) != f:
				res[k].wrong++
				fmt.Fprintf(os.Stderr, "wrong edit (%s) in %s line %d: %s\n", s.name, p, i+1, r.Content)
			case strings.Contains(r.Content, "old occurs"):
				res[k].refusedAmbiguous++
			}
			if err := b.cs.WriteFile(p, data); err != nil { // back to the base
				return err
			}
		}
	}
	fmt.Printf("edit robustness: %d sampled 3-line edits (unique exact old; %.1f%% of %d windows were ambiguous even exact)\n",
		n, 100*float64(ambiguousExact)/float64(sampled), sampled)
	fmt.Printf("  %-26s %7s %12s %12s %8s %10s\n", "slip", "tried", "old: exact", "new: ladder", "wrong", "ambiguous")
	slipTried, slipOK, oldSlipOK, wrong := 0, 0, 0, 0
	for k, s := range slips {
		t := res[k]
		fmt.Printf("  %-26s %7d %11.1f%% %11.1f%% %8d %10d\n", s.name, t.tried, 100*float64(t.oldOK)/float64(t.tried), 100*float64(t.newOK)/float64(t.tried), t.wrong, t.refusedAmbiguous)
		wrong += t.wrong
		if k > 0 {
			slipTried, slipOK, oldSlipOK = slipTried+t.tried, slipOK+t.newOK, oldSlipOK+t.oldOK
		}
	}
	share := 100 * float64(slipOK) / float64(slipTried)
	fmt.Printf("  %-26s %7d %11.1f%% %11.1f%%\n", "all slips", slipTried, 100*float64(oldSlipOK)/float64(slipTried), share)
	exact := res[0].newOK == res[0].tried
	fmt.Printf("  goals: slips applied >= 85%%: %v; exact 100%%: %v; no edit at a wrong place (a tolerant match applied only where unique): %v\n",
		share >= 85, exact, wrong == 0)
	if wrong > 0 || !exact {
		return fmt.Errorf("%d edits changed the file other than the exact edit would; exact edits all applied: %v", wrong, exact)
	}
	return nil
}

func pct(xs []int, p int) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return float64(s[min(len(s)-1, len(s)*p/100)])
}

func mean(xs []int) float64 {
	t := 0
	for _, x := range xs {
		t += x
	}
	return float64(t) / float64(max(len(xs), 1))
}
