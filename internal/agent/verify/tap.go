package verify

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

var (
	tapResult  = &lazyRE{pat: `^(not ok|ok)\b\s*([0-9]+)?\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$`}
	tapPlan    = &lazyRE{pat: `^1\.\.([0-9]+)`}
	tapSubtest = &lazyRE{pat: `^#\s*Subtest:\s*(.*)$`}
)

// parseTAP reads TAP (versions 12–14, with indented subtests as node's
// test runner prints them) from a check's output. "not ok" fails unless
// marked # TODO; "# SKIP" skips. A subtest is named "parent > child". A
// top-level plan that promises more results than came, or "Bail out!",
// is an error; no result at all means the output held no TAP.
func parseTAP(out string) (*testRun, error) { return readTAP(strings.NewReader(out)) }

// readTAP reads TAP as a stream (see parseTAP). A failing result keeps its
// diagnostics as its own output: the YAML block or "#" lines after it,
// more indented than it or comments, up to the next result.
func readTAP(r io.Reader) (*testRun, error) {
	run := newTestRun()
	parents := map[int]string{} // indentation -> the latest "# Subtest:" name
	plan, top, results := -1, 0, 0
	var bail string
	var diag *clipText // the latest failing result's diagnostics
	diagName, diagIndent := "", 0
	endDiag := func() {
		if diag != nil {
			run.keep(diagName, strings.TrimSpace(diag.String()), "")
			diag = nil
		}
	}
	_ = eachLine(r, func(rawLine string) {
		if bail != "" {
			return
		}
		raw := ansi.ReplaceAllString(rawLine, "")
		line := strings.TrimLeft(raw, " \t")
		indent := len(raw) - len(line)
		if strings.HasPrefix(line, "Bail out!") {
			bail = line
			return
		}
		isResult := tapResult.MatchString(line)
		if diag != nil && !isResult && (indent > diagIndent || strings.HasPrefix(line, "#") || line == "") {
			if !tapSubtest.MatchString(line) {
				diag.WriteString(line + "\n")
				return
			}
		}
		endDiag()
		if m := tapSubtest.FindStringSubmatch(line); m != nil {
			parents[indent] = strings.TrimSpace(m[1])
			for k := range parents {
				if k > indent {
					delete(parents, k)
				}
			}
			return
		}
		if m := tapPlan.FindStringSubmatch(line); m != nil && indent == 0 {
			plan, _ = strconv.Atoi(m[1])
			return
		}
		m := tapResult.FindStringSubmatch(line)
		if m == nil {
			return
		}
		results++
		if indent == 0 {
			top++
		}
		desc := strings.TrimSpace(m[3])
		if desc == "" {
			desc = "test " + m[2]
		}
		name := desc
		for k := indent - 1; k >= 0; k-- {
			if p, ok := parents[k]; ok && p != desc {
				name = p + " > " + name
			}
		}
		directive := strings.ToUpper(m[4])
		st := StatusPass
		switch {
		case strings.HasPrefix(directive, "SKIP"):
			st = StatusSkip
		case strings.HasPrefix(directive, "TODO"):
			st = StatusSkip // a TODO test's result does not count either way
		case m[1] == "not ok":
			st = StatusFail
		}
		run.set(name, st)
		if st == StatusFail {
			diag, diagName, diagIndent = newClip(perTestHead, perTestTail), name, indent
		}
	})
	endDiag()
	if bail != "" {
		return nil, fmt.Errorf("tap: %s", bail)
	}
	if results == 0 {
		return nil, fmt.Errorf("tap: no test results in the output")
	}
	if plan >= 0 && top < plan {
		return nil, fmt.Errorf("tap: the plan promises %d tests, %d reported", plan, top)
	}
	return run, nil
}
