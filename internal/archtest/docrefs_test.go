package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The design and the public contract live in docs/. Code comments point
// there ("see docs/cli.md#exit-codes-of-run-and-resume"); these tests fail
// when a comment names a page or a heading that does not exist, or still
// cites the numbered sections of a specification the repository does not
// contain.

// docRef matches a reference to a page under docs/, with an optional
// heading anchor.
var docRef = regexp.MustCompile(`docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md(#[A-Za-z0-9_-]+)?`)

// mdLink matches a markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// specCitation is the old way of citing the design.
const specCitation = "SPEC §"

// docSource is one text that may hold references: a comment of a source
// file, or a markdown page.
type docSource struct {
	file string // slash path relative to the module root
	line int
	text string
	md   bool // markdown: its links are relative to file
}

// problem is one broken reference.
type problem struct {
	at  string // file:line
	ref string // the reference or citation
	msg string
}

func (p problem) String() string { return p.at + ": " + p.ref + ": " + p.msg }

// pages caches the anchors of each markdown page, by slash path relative
// to the module root; a missing page maps to nil.
type pages struct {
	root    string
	anchors map[string]map[string]bool
}

func (p *pages) lookup(rel string) (map[string]bool, bool) {
	if a, ok := p.anchors[rel]; ok {
		return a, a != nil
	}
	data, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(rel)))
	if err != nil {
		p.anchors[rel] = nil
		return nil, false
	}
	a := headingAnchors(data)
	p.anchors[rel] = a
	return a, true
}

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown page (fenced code blocks are not headings; a repeated heading
// gets -1, -2, …).
func headingAnchors(md []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		trim := strings.TrimLeft(line, " ")
		if f := fenceOf(trim); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trim, fence) && strings.TrimLeft(trim, fence[:1]) == "":
				fence = ""
			}
			continue
		}
		if fence != "" || len(line)-len(trim) > 3 {
			continue
		}
		text, ok := headingText(trim)
		if !ok {
			continue
		}
		slug := slugify(text)
		if n := seen[slug]; n > 0 {
			seen[slug] = n + 1
			slug = fmt.Sprintf("%s-%d", slug, n)
		} else {
			seen[slug] = 1
		}
		out[slug] = true
	}
	return out
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, as long as
// written), or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// headingText returns the text of an ATX heading ("## Title").
func headingText(line string) (string, bool) {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n < 1 || n > 6 || (len(line) > n && line[n] != ' ') {
		return "", false
	}
	text := strings.TrimSpace(line[n:])
	text = strings.TrimSpace(strings.TrimRight(text, "#"))
	return text, text != ""
}

// slugify is GitHub's heading anchor: link targets and markup dropped,
// lower case, letters, digits, '-' and '_' kept, spaces to '-'.
func slugify(text string) string {
	text = mdLink.ReplaceAllString(text, "]")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// check returns the broken references and old citations of one source.
func (p *pages) check(s docSource) []problem {
	var out []problem
	at := func(i int) string {
		return fmt.Sprintf("%s:%d", s.file, s.line+strings.Count(s.text[:i], "\n"))
	}
	for i, off := 0, 0; ; off = i + len(specCitation) {
		j := strings.Index(s.text[off:], specCitation)
		if j < 0 {
			break
		}
		i = off + j
		out = append(out, problem{at(i), strings.TrimSpace(lineAt(s.text, i)), "cites a document the repository does not contain; point at the page under docs/ instead"})
	}
	target := func(i int, rel, anchor, shown string) {
		anchors, ok := p.lookup(rel)
		switch {
		case !ok:
			out = append(out, problem{at(i), shown, "no such file"})
		case anchor != "" && !anchors[anchor]:
			out = append(out, problem{at(i), shown, fmt.Sprintf("%s has no heading with anchor #%s", rel, anchor)})
		}
	}
	if s.md {
		for _, m := range mdLink.FindAllStringSubmatchIndex(s.text, -1) {
			link := s.text[m[2]:m[3]]
			if strings.Contains(link, ":") || strings.HasPrefix(link, "<") {
				continue // a URL or a scheme: not a page of this repository
			}
			file, anchor, _ := strings.Cut(link, "#")
			rel := s.file
			if file != "" {
				if !strings.HasSuffix(file, ".md") {
					continue // a source file or a directory
				}
				rel = path.Join(path.Dir(s.file), file)
			}
			target(m[2], rel, anchor, link)
		}
		return out
	}
	for _, m := range docRef.FindAllStringSubmatchIndex(s.text, -1) {
		ref := s.text[m[0]:m[1]]
		file, anchor, _ := strings.Cut(ref, "#")
		target(m[0], path.Clean(file), anchor, ref)
	}
	return out
}

func lineAt(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		return text[start:]
	}
	return text[start : i+end]
}

// goComments returns the comments of a Go file.
func goComments(rel string, src []byte) []docSource {
	fset := token.NewFileSet()
	f := fset.AddFile(rel, -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, nil, scanner.ScanComments)
	var out []docSource
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.COMMENT {
			out = append(out, docSource{file: rel, line: fset.Position(pos).Line, text: lit})
		}
	}
}

// scriptComments returns the comments of a TypeScript or Lua file, line
// by line: from an unquoted "//" or "--" to the end of the line, and the
// lines of /* … */ blocks.
func scriptComments(rel string, src []byte, marker string) []docSource {
	var out []docSource
	inBlock := false
	for i, line := range strings.Split(string(src), "\n") {
		if inBlock {
			out = append(out, docSource{file: rel, line: i + 1, text: line})
			inBlock = !strings.Contains(line, "*/")
			continue
		}
		if j := unquoted(line, marker); j >= 0 {
			out = append(out, docSource{file: rel, line: i + 1, text: line[j:]})
			continue
		}
		if marker == "//" {
			if j := unquoted(line, "/*"); j >= 0 {
				out = append(out, docSource{file: rel, line: i + 1, text: line[j:]})
				inBlock = !strings.Contains(line[j:], "*/")
			}
		}
	}
	return out
}

// unquoted returns the index of the first marker outside a string literal
// on line, or -1.
func unquoted(line, marker string) int {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case strings.HasPrefix(line[i:], marker):
			return i
		}
	}
	return -1
}

// skipDir names directories that hold no source of ours.
func skipDir(name string) bool {
	switch name {
	case ".git", "node_modules", "testdata", "dist", "out-test", "test-artifacts", "vendor":
		return true
	}
	return false
}

// moduleSources collects every comment of the module's Go files, of the
// editor clients' TypeScript and Lua, and every markdown page.
func moduleSources(t *testing.T, root string) []docSource {
	t.Helper()
	var out []docSource
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (skipDir(d.Name()) || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		ext := path.Ext(rel)
		editors := strings.HasPrefix(rel, "editors/")
		if ext != ".go" && ext != ".md" && !(editors && (ext == ".ts" || ext == ".lua")) {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch ext {
		case ".go":
			out = append(out, goComments(rel, src)...)
		case ".ts":
			out = append(out, scriptComments(rel, src, "//")...)
		case ".lua":
			out = append(out, scriptComments(rel, src, "--")...)
		case ".md":
			out = append(out, docSource{file: rel, line: 1, text: string(src), md: true})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk the module: %v", err)
	}
	return out
}

// TestDocReferences: every docs/… page and #heading a comment or a page
// names exists, and no comment cites the numbered sections of a
// specification the repository does not hold.
func TestDocReferences(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	p := &pages{root: root, anchors: map[string]map[string]bool{}}
	var problems []string
	refs, goFiles, scripts := 0, map[string]bool{}, map[string]bool{}
	for _, s := range moduleSources(t, root) {
		switch path.Ext(s.file) {
		case ".go":
			goFiles[s.file] = true
		case ".ts", ".lua":
			scripts[s.file] = true
		}
		if !s.md {
			refs += len(docRef.FindAllString(s.text, -1))
		}
		for _, pr := range p.check(s) {
			problems = append(problems, pr.String())
		}
	}
	// The walk must have found the tree, or the test proves nothing.
	if len(goFiles) < 100 || len(scripts) < 5 || refs < 30 {
		t.Fatalf("scanned %d Go files, %d editor scripts and %d docs/ references in comments; the test is looking in the wrong place", len(goFiles), len(scripts), refs)
	}
	sort.Strings(problems)
	for _, pr := range problems {
		t.Error(pr)
	}
}

// TestDocReferenceCheckCatches makes sure the check itself can fail: a
// missing page, a missing heading and an old citation are each reported,
// in Go, TypeScript, Lua and markdown, and good references are not.
func TestDocReferenceCheckCatches(t *testing.T) {
	root := t.TempDir()
	page := "# Title\n\n## Exit codes of `run` and `resume`\n\n```yaml\n# not a heading\n```\n\n## Twice\n\n## Twice\n"
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "cli.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &pages{root: root, anchors: map[string]map[string]bool{}}
	var srcs []docSource
	srcs = append(srcs, goComments("a.go", []byte("package a\n\n// ok: docs/cli.md, docs/cli.md#exit-codes-of-run-and-resume, docs/cli.md#twice-1.\n// bad: docs/nope.md and docs/cli.md#not-a-heading\nvar s = \"docs/ignored.md in a string\"\n\n/* old: SPEC §2 */\n"))...)
	srcs = append(srcs, scriptComments("x.ts", []byte("const u = 'https://x//y'; // see docs/cli.md#title\n/**\n * docs/cli.md#gone\n */\n"), "//")...)
	srcs = append(srcs, scriptComments("x.lua", []byte("local s = \"--\" -- SPEC §8 keys\n"), "--")...)
	srcs = append(srcs, docSource{file: "docs/x.md", line: 1, text: "[a](cli.md#twice) [b](missing.md) [c](#nowhere) [d](https://example.com/x.md#y) [e](../go.mod)", md: true})
	var got []string
	for _, s := range srcs {
		for _, pr := range p.check(s) {
			got = append(got, pr.at+" "+pr.ref)
		}
	}
	want := []string{
		"a.go:4 docs/nope.md",
		"a.go:4 docs/cli.md#not-a-heading",
		"a.go:7 /* old: SPEC §2 */",
		"x.ts:3 docs/cli.md#gone",
		"x.lua:1 -- SPEC §8 keys",
		"docs/x.md:1 missing.md",
		"docs/x.md:1 #nowhere",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
