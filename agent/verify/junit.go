package verify

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// reportScript runs a check and then prints the JUnit report files it
// wrote, each after a marker line carrying a nonce, so they travel back
// on the output (the sandbox discards the check's own writes). Report
// files left from before (in the workspace or the change set) are removed
// first, so only a report this run wrote counts. $1 nonce, $2 the report
// path or glob (expanded by the shell with IFS empty: no word splitting),
// $3 "argv" or "shell", then the command.
const reportScript = `n=$1; p=$2; m=$3; shift 3
IFS=
rm -f -- $p 2>/dev/null
if [ "$m" = shell ]; then /bin/sh -c "$1"; else "$@"; fi
s=$?
for f in $p; do
  if [ -f "$f" ]; then printf '\n%s file %s\n' "$n" "$f"; cat -- "$f"; fi
done
printf '\n%s end\n' "$n"
exit $s
`

// withReport wraps a check's command in reportScript; nonce marks the
// report sections in the output.
func withReport(argv []string, shell, pattern string) (wrapped []string, nonce string) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	nonce = "ioh-report-" + hex.EncodeToString(b[:])
	wrapped = []string{"/bin/sh", "-c", reportScript, "ioh-report", nonce, pattern}
	if shell != "" {
		return append(wrapped, "shell", shell), nonce
	}
	return append(append(wrapped, "argv"), argv...), nonce
}

// splitReport separates the check's own output from the report files
// reportScript appended. complete is false when the end marker is missing
// (the output cap cut it, or the wrapper was killed).
func splitReport(out, nonce string) (text string, files map[string]string, complete bool) {
	mark := "\n" + nonce + " "
	i := strings.Index(out, mark)
	if i < 0 {
		return out, nil, false
	}
	text, rest := out[:i], out[i+len(mark):]
	files = map[string]string{}
	for {
		head, body, found := strings.Cut(rest, "\n")
		if head == "end" {
			return text, files, true
		}
		name, ok := strings.CutPrefix(head, "file ")
		if !ok || !found {
			return text, files, false
		}
		j := strings.Index(body, mark)
		if j < 0 {
			return text, files, false
		}
		files[name], rest = body[:j], body[j+len(mark):]
	}
}

// parseJUnit reads JUnit XML (a <testsuites> or <testsuite> root, suites
// nested at any depth) into per-test results: a <testcase> with a
// <failure> or <error> failed, one with <skipped> was skipped, any other
// passed. A test is named "classname.name" (or name without a class).
func parseJUnit(run *testRun, data string) error {
	dec := xml.NewDecoder(strings.NewReader(data))
	dec.Strict = false
	var cur string
	var st Status
	depth, cases := 0, 0
	inCase := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("parse junit report: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch t.Name.Local {
			case "testcase":
				cur, st, inCase = caseName(t.Attr), StatusPass, depth
				cases++
			case "failure", "error":
				if inCase > 0 {
					st = StatusFail
				}
			case "skipped":
				if inCase > 0 && st != StatusFail {
					st = StatusSkip
				}
			}
		case xml.EndElement:
			if t.Name.Local == "testcase" && depth == inCase {
				run.set(cur, st)
				inCase = 0
			}
			depth--
		}
	}
	if depth != 0 {
		return fmt.Errorf("parse junit report: unterminated element")
	}
	if cases == 0 && !strings.Contains(data, "testsuite") {
		return fmt.Errorf("parse junit report: no <testsuite> or <testcase> element")
	}
	return nil
}

func caseName(attrs []xml.Attr) string {
	var class, name string
	for _, a := range attrs {
		switch a.Name.Local {
		case "classname":
			class = a.Value
		case "name":
			name = a.Value
		}
	}
	if class == "" {
		return name
	}
	return class + "." + name
}

// readJUnit turns the report files of one run into per-test results; nil
// and the reason when there are none or one cannot be read.
func readJUnit(files map[string]string, complete bool, pattern string) (*testRun, string) {
	if !complete {
		return nil, fmt.Sprintf("its JUnit report %s did not come back whole (output cap or killed)", pattern)
	}
	if len(files) == 0 {
		return nil, fmt.Sprintf("it wrote no JUnit report at %s", pattern)
	}
	run := newTestRun()
	for name, body := range files {
		if err := parseJUnit(run, body); err != nil {
			return nil, fmt.Sprintf("%s: %v", name, err)
		}
	}
	return run, ""
}
