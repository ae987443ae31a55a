package verify

import (
	"path"
	"strconv"
	"strings"
)

var (
	goFailRe    = &lazyRE{pat: `^\s*--- FAIL: `}
	goPassRe    = &lazyRE{pat: `^\s*--- (?:PASS|SKIP): `}
	goRunRe     = &lazyRE{pat: `^\s*=== (?:RUN|CONT|NAME|PAUSE)\s`}
	goTestLocRe = &lazyRE{pat: `^\s+([^\s:]+\.go):(\d+): (.*)$`}
	goPkgRe     = &lazyRE{pat: `^(?:FAIL|ok)\s+(\S+)(?:\s|$)`}

	rustHeadRe     = &lazyRE{pat: `^(error|warning)(\[\w+\])?: (.+)$`}
	rustArrowRe    = &lazyRE{pat: `^\s*--> (.+?):(\d+):(\d+)$`}
	rustPanicRe    = &lazyRE{pat: `panicked at (.+?):(\d+):(\d+):$`}
	rustPanicOldRe = &lazyRE{pat: `panicked at '(.*)', (.+?):(\d+):(\d+)$`}

	pyFrameRe = &lazyRE{pat: `^\s*File "(.+)", line (\d+)`}

	tsParenRe  = &lazyRE{pat: `^(.+?)\((\d+),(\d+)\): (?:error|warning) (TS\d+: .*)$`}
	tsPrettyRe = &lazyRE{pat: `^(.+?):(\d+):(\d+) - (?:error|warning) (TS\d+: .*)$`}

	jsErrRe   = &lazyRE{pat: `^(?:Uncaught )?((?:[A-Z]\w*)?(?:Error|Exception)(?: \[\w+\])?: .*)$`}
	jsFrameRe = &lazyRE{pat: `^\s+at (?:.*? \()?(.+?):(\d+):(\d+)\)?$`}
	jsTestRe  = &lazyRE{pat: `^\s*not ok \d+ - (.*)$`}
	jsLocRe   = &lazyRE{pat: `^\s+location: '(.+):(\d+):(\d+)'$`}

	eslintRe  = &lazyRE{pat: `^\s+(\d+):(\d+)\s+(?:error|warning)\s+(.+?)(?:\s{2,}[\w@/-]+)?$`}
	genericRe = &lazyRE{pat: `(?:^|[\s(\[]|: )((?:[A-Za-z]:)?[^\s:()\[\]"'<>|,]+):(\d+)(?::(\d+))?:(?:\s+(.*))?$`}
)

// line feeds one output line (colour codes removed) through the
// recognisers, most specific first.
func (p *parser) line(s string) {
	if p.rustPanic != nil {
		l := *p.rustPanic
		l.Message = s
		p.rustPanic = nil
		p.emit(l)
		return
	}
	if p.pythonLine(s) || p.goLine(s) || p.rustLine(s) || p.tsLine(s) || p.jsLine(s) || p.eslintLine(s) {
		return
	}
	p.genericLine(s)
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// at builds a location from a printed path, resolving it.
func (p *parser) at(printed, line, col, msg string) (Location, bool) {
	rel, known := p.resolve(printed)
	return Location{Path: rel, Line: atoi(line), Col: atoi(col), Message: msg}, known
}

// goLine: `go test` prints a test's messages ("    x_test.go:20: msg",
// relative to the package directory) before its "--- FAIL:" line under -v
// and -json, after it without -v; "FAIL\tmodule/pkg\t0.1s" then names the
// directory. Only a failing test's messages become locations: those since
// the last "=== RUN/CONT/NAME" line when "--- FAIL:" comes, and those
// after it until the next test's line. A passing test's log lines never
// do. Compiler and vet errors are the generic form.
func (p *parser) goLine(s string) bool {
	switch {
	case goFailRe.MatchString(s):
		p.goFailed = append(p.goFailed, p.goPending...)
		p.goPending, p.inGoFail = nil, true
		return true
	case goPassRe.MatchString(s), goRunRe.MatchString(s):
		p.goPending, p.inGoFail = nil, false
		return true
	}
	if m := goTestLocRe.FindStringSubmatch(s); m != nil {
		l := Location{Path: m[1], Line: atoi(m[2]), Message: m[3]}
		if p.inGoFail {
			p.goFailed = append(p.goFailed, l)
		} else {
			p.goPending = append(p.goPending, l)
		}
		return true
	}
	if m := goPkgRe.FindStringSubmatch(s); m != nil && (len(p.goFailed) > 0 || len(p.goPending) > 0 || p.inGoFail) {
		p.flushGo(m[1])
		return true
	}
	return false
}

// flushGo resolves pending test locations against the package importPath.
func (p *parser) flushGo(importPath string) {
	dir := ""
	if p.module != "" && importPath != "" {
		if importPath == p.module {
			dir = "."
		} else if rest, ok := strings.CutPrefix(importPath, p.module+"/"); ok {
			dir = rest
		}
	}
	for _, l := range p.goFailed {
		if dir != "" {
			if cand := path.Join(dir, l.Path); p.exists(cand) {
				l.Path = cand
				p.emit(l)
				continue
			}
		}
		l.Path, _ = p.resolve(l.Path)
		p.emit(l)
	}
	p.goFailed, p.goPending, p.inGoFail = nil, nil, false
}

// rustLine: "error[E0308]: msg" then " --> src/main.rs:4:5"; test panics
// "panicked at src/lib.rs:8:9:" with the message on the next line (older
// toolchains: "panicked at 'msg', src/lib.rs:8:9").
func (p *parser) rustLine(s string) bool {
	if m := rustHeadRe.FindStringSubmatch(s); m != nil {
		p.rustMsg = m[1] + m[2] + ": " + m[3]
		return true
	}
	if m := rustArrowRe.FindStringSubmatch(s); m != nil {
		l, _ := p.at(m[1], m[2], m[3], p.rustMsg)
		p.emit(l)
		return true
	}
	if m := rustPanicRe.FindStringSubmatch(s); m != nil {
		l, _ := p.at(m[1], m[2], m[3], "")
		p.rustPanic = &l
		return true
	}
	if m := rustPanicOldRe.FindStringSubmatch(s); m != nil {
		l, _ := p.at(m[2], m[3], m[4], m[1])
		p.emit(l)
		return true
	}
	return false
}

// pythonLine collects traceback frames; the first unindented line after
// them is the exception, reported at the innermost frame inside the
// workspace (else the innermost frame).
func (p *parser) pythonLine(s string) bool {
	if m := pyFrameRe.FindStringSubmatch(s); m != nil {
		l, known := p.at(m[1], m[2], "", "")
		if !known {
			l.Col = -1 // marks a frame outside the workspace
		}
		p.pyFrames = append(p.pyFrames, l)
		return true
	}
	if len(p.pyFrames) == 0 {
		return false
	}
	if s == "" || s[0] == ' ' || s[0] == '\t' || strings.HasPrefix(s, "Traceback") {
		return true // source excerpt, caret line, or a chained traceback
	}
	pick := p.pyFrames[len(p.pyFrames)-1]
	for i := len(p.pyFrames) - 1; i >= 0; i-- {
		if p.pyFrames[i].Col != -1 {
			pick = p.pyFrames[i]
			break
		}
	}
	pick.Col = 0
	pick.Message = s
	p.pyFrames = nil
	p.emit(pick)
	return true
}

// tsLine: tsc's "src/a.ts(3,5): error TS2322: msg" and its pretty
// "src/a.ts:3:5 - error TS2322: msg".
func (p *parser) tsLine(s string) bool {
	m := tsParenRe.FindStringSubmatch(s)
	if m == nil {
		m = tsPrettyRe.FindStringSubmatch(s)
	}
	if m == nil {
		return false
	}
	l, _ := p.at(m[1], m[2], m[3], m[4])
	p.emit(l)
	return true
}

// jsLine: node's "Error: msg" followed by "    at f (/path/a.js:3:9)"
// frames (the first frame inside the workspace is reported), and node's
// test runner's "not ok N - name" with "location: '/path:3:1'".
func (p *parser) jsLine(s string) bool {
	if m := jsErrRe.FindStringSubmatch(s); m != nil {
		p.jsMsg, p.jsFound = m[1], false
		return true
	}
	if m := jsTestRe.FindStringSubmatch(s); m != nil {
		p.jsMsg, p.jsFound = "test failed: "+m[1], false
		return true
	}
	m := jsLocRe.FindStringSubmatch(s)
	if m == nil {
		m = jsFrameRe.FindStringSubmatch(s)
	}
	if m == nil {
		return false
	}
	if p.jsFound || strings.HasPrefix(m[1], "node:") {
		return true
	}
	if l, known := p.at(m[1], m[2], m[3], p.jsMsg); known {
		p.jsFound = true
		p.emit(l)
	}
	return true
}

// eslintLine: the stylish format prints the file alone on a line, then
// "  3:5  error  msg  rule" lines.
func (p *parser) eslintLine(s string) bool {
	if s == "" {
		p.eslintFile = ""
		return false
	}
	if !strings.ContainsAny(s, " \t:") || (strings.HasPrefix(s, "/") && !strings.Contains(s, " ")) {
		if rel, known := p.resolve(s); known {
			p.eslintFile = rel
			return true
		}
	}
	if p.eslintFile == "" {
		return false
	}
	if m := eslintRe.FindStringSubmatch(s); m != nil {
		p.emit(Location{Path: p.eslintFile, Line: atoi(m[1]), Col: atoi(m[2]), Message: m[3]})
		return true
	}
	return false
}

// genericLine: "path:line:col: msg" and "path:line: msg" (gcc, go build,
// go vet's "vet: " prefix, pytest, eslint's unix format, make), kept only
// when the path is a workspace file.
func (p *parser) genericLine(s string) {
	m := genericRe.FindStringSubmatch(s)
	if m == nil {
		return
	}
	if l, known := p.at(m[1], m[2], m[3], m[4]); known {
		p.emit(l)
	}
}
