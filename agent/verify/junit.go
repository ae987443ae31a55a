package verify

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// reportTag starts the lines reportScript adds to the output. It is no
// secret: anything the check prints can imitate it, so the report block
// is found by its length, from the very end of the output (splitReport).
const reportTag = "ioh-report"

// reportScript runs a check and then prints the JUnit report files it
// wrote, so they travel back on the output (the sandbox discards the
// check's own writes). Report files left from before (in the workspace or
// the change set) are removed first, so only a report this run wrote
// counts. $1 the report path or glob (expanded by the shell with IFS
// empty: no word splitting), $2 "argv" or "shell", then the command.
//
// After the command has ended it prints, for each report file, a line
// "ioh-report file SIZE NAME" and the file's SIZE bytes, then the trailer
// "\nioh-report end TOTAL\n" as the last bytes of the output, TOTAL being
// the length of everything it printed before the trailer. The reader takes
// exactly those TOTAL bytes before the trailer as the reports: a report
// the command (or anything it started) printed itself lies before them
// and is only output, and anything printed after the trailer makes the
// reports unreadable. There is no nonce to learn: a process in the
// sandbox can read the wrapper's command line and memory, so a secret
// there would be no secret. Sizes are counted in bytes by wc -c, whatever
// shell /bin/sh is and whatever its locale. The command's standard error
// joins its standard output, so that what it wrote there cannot arrive
// after the trailer (the sandbox reads the two streams on separate pipes).
const reportScript = `p=$1; m=$2; shift 2
IFS=
rm -f -- $p 2>/dev/null
if [ "$m" = shell ]; then /bin/sh -c "$1" 2>&1; else "$@" 2>&1; fi
s=$?
LC_ALL=C
export LC_ALL
nl='
'
t=0
for f in $p; do
  case $f in *"$nl"*) continue ;; esac
  if [ -f "$f" ]; then
    z=$(wc -c < "$f") || continue
    z=$((z + 0))
    h="ioh-report file $z $f"
    printf '%s\n' "$h"
    cat -- "$f"
    l=$(printf '%s\n' "$h" | wc -c)
    t=$((t + l + z))
  fi
done
printf '\nioh-report end %d\n' "$t"
exit $s
`

// withReport wraps a check's command in reportScript.
func withReport(argv []string, shell, pattern string) []string {
	wrapped := []string{"/bin/sh", "-c", reportScript, reportTag, pattern}
	if shell != "" {
		return append(wrapped, "shell", shell)
	}
	return append(append(wrapped, "argv"), argv...)
}

// splitReport separates the check's own output from the report files
// reportScript appended (see there). complete is false when the output
// does not end with the trailer or the block before it does not parse
// exactly (the output cap cut it, the wrapper was killed, or something
// wrote after it or into it).
func splitReport(out string) (text string, files map[string]string, complete bool) {
	body, ok := strings.CutSuffix(out, "\n")
	if !ok {
		return out, nil, false
	}
	i := strings.LastIndex(body, "\n"+reportTag+" end ")
	if i < 0 {
		return out, nil, false
	}
	total, err := strconv.Atoi(body[i+len("\n"+reportTag+" end "):])
	if err != nil || total < 0 || total > i {
		return out, nil, false
	}
	text, block := out[:i-total], out[i-total:i]
	files = map[string]string{}
	for block != "" {
		head, rest, found := strings.Cut(block, "\n")
		if !found {
			return out, nil, false
		}
		sizeName, ok := strings.CutPrefix(head, reportTag+" file ")
		if !ok {
			return out, nil, false
		}
		sz, name, ok := strings.Cut(sizeName, " ")
		n, err := strconv.Atoi(sz)
		if !ok || err != nil || n < 0 || n > len(rest) || name == "" {
			return out, nil, false
		}
		files[name], block = rest[:n], rest[n:]
	}
	return text, files, true
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
		return nil, fmt.Sprintf("its JUnit report %s did not come back whole (output cap, killed, or output written after it)", pattern)
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
