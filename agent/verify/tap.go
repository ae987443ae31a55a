package verify

import (
	"bufio"
	"fmt"
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
func parseTAP(out string) (*testRun, error) {
	run := newTestRun()
	parents := map[int]string{} // indentation -> the latest "# Subtest:" name
	plan, top, results := -1, 0, 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		raw := strings.TrimRight(ansi.ReplaceAllString(sc.Text(), ""), "\r")
		line := strings.TrimLeft(raw, " \t")
		indent := len(raw) - len(line)
		if strings.HasPrefix(line, "Bail out!") {
			return nil, fmt.Errorf("tap: %s", line)
		}
		if m := tapSubtest.FindStringSubmatch(line); m != nil {
			parents[indent] = strings.TrimSpace(m[1])
			for k := range parents {
				if k > indent {
					delete(parents, k)
				}
			}
			continue
		}
		if m := tapPlan.FindStringSubmatch(line); m != nil && indent == 0 {
			plan, _ = strconv.Atoi(m[1])
			continue
		}
		m := tapResult.FindStringSubmatch(line)
		if m == nil {
			continue
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
	}
	if results == 0 {
		return nil, fmt.Errorf("tap: no test results in the output")
	}
	if plan >= 0 && top < plan {
		return nil, fmt.Errorf("tap: the plan promises %d tests, %d reported", plan, top)
	}
	return run, nil
}
