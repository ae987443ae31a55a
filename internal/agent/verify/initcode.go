package verify

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"strconv"
	"strings"
)

// goInitCode returns why new (the change's content of the Go file p, old
// its content before) adds or changes code that runs before or instead of
// the tests: an init function, TestMain, or a package-level variable whose
// initialiser calls a function (other than a few side-effect-free standard
// constructors). Any package counts, since a tested package may import it.
func goInitCode(p string, old, new []byte) []string {
	now, err := goInits(p, new)
	if err != nil {
		return []string{fmt.Sprintf("%s does not parse, so package-init code in it cannot be ruled out", p)}
	}
	before, _ := goInits(p, old) // an unparsable old file: everything is new
	seen := map[string]int{}
	for _, it := range before {
		seen[it.kind+"\x00"+it.src]++
	}
	var out []string
	reported := map[string]bool{}
	for _, it := range now {
		k := it.kind + "\x00" + it.src
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		if reported[it.kind] {
			continue
		}
		reported[it.kind] = true
		switch it.kind {
		case "init":
			out = append(out, fmt.Sprintf("adds or changes an init function in %s: code that runs when the package loads", p))
		case "TestMain":
			out = append(out, fmt.Sprintf("adds or changes TestMain in %s: it decides whether and which tests run", p))
		default:
			out = append(out, fmt.Sprintf("adds or changes package-level variable %s in %s, initialised by a call that runs when the package loads", it.kind[len("var "):], p))
		}
	}
	return out
}

type goInit struct{ kind, src string }

// goInits lists a file's package-init code with its source text.
func goInits(p string, src []byte) ([]goInit, error) {
	if src == nil {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, p, src, goparser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	text := func(n ast.Node) string {
		a, b := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return string(src[a:b])
	}
	imports := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		ip, _ := strconv.Unquote(im.Path.Value)
		name := ip[strings.LastIndex(ip, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = ip
	}
	var out []goInit
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				continue
			}
			if d.Name.Name == "init" || (d.Name.Name == "TestMain" && strings.HasSuffix(p, "_test.go")) {
				out = append(out, goInit{d.Name.Name, text(d)})
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				vs := s.(*ast.ValueSpec)
				for _, v := range vs.Values {
					if callsCode(v, imports) {
						out = append(out, goInit{"var " + vs.Names[0].Name, text(vs)})
						break
					}
				}
			}
		}
	}
	return out, nil
}

// pureCalls are standard functions whose call in a variable initialiser
// runs no code of the workspace's.
var pureCalls = &lazyValue[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"errors.New": true, "fmt.Errorf": true, "regexp.MustCompile": true,
		"strings.NewReplacer": true, "time.Date": true, "big.NewInt": true,
	}
}}

var goBuiltins = &lazyValue[map[string]bool]{build: func() map[string]bool {
	return map[string]bool{
		"make": true, "new": true, "len": true, "cap": true, "append": true, "min": true, "max": true,
		"string": true, "byte": true, "rune": true, "int": true, "int8": true, "int16": true, "int32": true,
		"int64": true, "uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
		"float32": true, "float64": true, "bool": true, "uintptr": true, "complex": true,
	}
}}

// callsCode reports whether evaluating e can call code other than
// builtins, conversions to composite literal types and pureCalls from the
// standard library; a function literal counts only when called.
func callsCode(e ast.Expr, imports map[string]string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found {
			return false
		}
		if _, ok := n.(*ast.FuncLit); ok {
			return false // defined, not run (a call of it is a CallExpr below)
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			if goBuiltins.get()[fn.Name] {
				return true
			}
		case *ast.SelectorExpr:
			if pkg, ok := fn.X.(*ast.Ident); ok {
				ip, imported := imports[pkg.Name]
				std := imported && !strings.Contains(ip, ".")
				if std && pureCalls.get()[ip[strings.LastIndex(ip, "/")+1:]+"."+fn.Sel.Name] {
					return true
				}
			}
		case *ast.ArrayType, *ast.MapType, *ast.ChanType:
			return true // a conversion
		}
		found = true
		return false
	})
	return found
}

// pyImportCode returns why new (the content of the Python file p, old its
// content before) adds statements that run when the module is imported
// beyond definitions, imports and assignments of literals: calls,
// control flow, raise, assert at the top level. Test modules and conftest
// are reported as test files already; this catches the code under test
// exiting or patching things on import.
func pyImportCode(p string, old, new []byte) []string {
	before := map[string]int{}
	for _, s := range pyTopLevelCode(old) {
		before[s]++
	}
	for _, s := range pyTopLevelCode(new) {
		if before[s] > 0 {
			before[s]--
			continue
		}
		return []string{fmt.Sprintf("adds code that runs when %s is imported: %s", p, clipLine(s))}
	}
	return nil
}

// pyTopLevelCode returns the top-level lines of a module that run code on
// import. It follows triple-quoted strings and bracket nesting roughly; it
// errs towards reporting.
func pyTopLevelCode(src []byte) []string {
	var out []string
	inString := ""
	depth := 0
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimRight(line, "\r")
		if inString != "" {
			if strings.Count(line, inString)%2 == 1 {
				inString = ""
			}
			continue
		}
		top := depth == 0 && line != "" && line[0] != ' ' && line[0] != '\t'
		depth += strings.Count(line, "(") + strings.Count(line, "[") + strings.Count(line, "{")
		depth -= strings.Count(line, ")") + strings.Count(line, "]") + strings.Count(line, "}")
		if depth < 0 {
			depth = 0
		}
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(line, q)%2 == 1 {
				inString = q
			}
		}
		if !top {
			continue
		}
		t := strings.TrimSpace(line)
		if pyQuiet(t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// pyQuiet: a top-level line that runs no code of its own on import.
func pyQuiet(t string) bool {
	for _, pre := range []string{"#", "def ", "async def ", "class ", "@", "import ", "from ", `"`, "'", ")", "]", "}", "if __name__", "else:", "elif ", "except", "finally:", "pass"} {
		if strings.HasPrefix(t, pre) {
			return true
		}
	}
	for _, pre := range []string{"if ", "for ", "while ", "try:", "with ", "raise", "assert", "exec", "del "} {
		if strings.HasPrefix(t, pre) {
			return false
		}
	}
	return !strings.Contains(t, "(")
}

func clipLine(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
