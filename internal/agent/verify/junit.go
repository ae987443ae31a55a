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
// reportScript appended (see there), for output held in memory.
func splitReport(out string) (text string, files map[string]string, complete bool) {
	textLen, sections, complete := splitReportAt(strings.NewReader(out), int64(len(out)))
	if !complete {
		return out, nil, false
	}
	files = map[string]string{}
	for _, f := range sections {
		b, _ := io.ReadAll(f.r)
		files[f.name] = string(b)
	}
	return out[:textLen], files, true
}

// reportFile is one report file inside a check's output.
type reportFile struct {
	name string
	r    *io.SectionReader
}

// splitReportAt finds the report files reportScript appended to a check's
// output of size bytes, reading only the trailer and the file headers:
// the output before them is text (textLen bytes), each file a section.
// complete is false when the output does not end with the trailer or the
// block before it does not parse exactly (the wrapper was killed, or
// something wrote after it or into it).
func splitReportAt(out io.ReaderAt, size int64) (textLen int64, files []reportFile, complete bool) {
	const endTag = "\n" + reportTag + " end "
	tailLen := min(size, int64(len(endTag)+24))
	tail := make([]byte, tailLen)
	if _, err := out.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
		return size, nil, false
	}
	body, ok := strings.CutSuffix(string(tail), "\n")
	if !ok {
		return size, nil, false
	}
	j := strings.LastIndex(body, endTag)
	if j < 0 {
		return size, nil, false
	}
	total, err := strconv.ParseInt(body[j+len(endTag):], 10, 64)
	i := size - tailLen + int64(j) // where the trailer starts
	if err != nil || total < 0 || total > i {
		return size, nil, false
	}
	pos := i - total
	for pos < i {
		head, ok := readHeader(out, pos, i)
		if !ok {
			return size, nil, false
		}
		sizeName, ok := strings.CutPrefix(head, reportTag+" file ")
		if !ok {
			return size, nil, false
		}
		sz, name, ok := strings.Cut(sizeName, " ")
		n, err := strconv.ParseInt(sz, 10, 64)
		start := pos + int64(len(head)) + 1
		if !ok || err != nil || n < 0 || n > i-start || name == "" {
			return size, nil, false
		}
		files = append(files, reportFile{name, io.NewSectionReader(out, start, n)})
		pos = start + n
	}
	return i - total, files, true
}

// readHeader reads the line at pos (before end) without its newline.
func readHeader(out io.ReaderAt, pos, end int64) (string, bool) {
	buf := make([]byte, min(end-pos, 4096))
	n, _ := out.ReadAt(buf, pos)
	line, _, found := strings.Cut(string(buf[:n]), "\n")
	return line, found
}

// parseJUnit reads JUnit XML held in memory: see readJUnitXML.
func parseJUnit(run *testRun, data string) error {
	return readJUnitXML(run, strings.NewReader(data))
}

// readJUnitXML reads JUnit XML (a <testsuites> or <testsuite> root, suites
// nested at any depth) as a stream into per-test results: a <testcase>
// with a <failure> or <error> failed, one with <skipped> was skipped, any
// other passed. A failing case keeps the message and the body of its
// <failure>/<error> (bounded) as its own output. A test is named
// "classname.name" (or name without a class).
func readJUnitXML(run *testRun, r io.Reader) error {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	var cur string
	var st Status
	var body *clipText // the current failure's message and text
	depth, cases, inCase, inFail := 0, 0, 0, 0
	sawSuite := false
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
			case "testsuite", "testsuites":
				sawSuite = true
			case "testcase":
				cur, st, inCase, body = caseName(t.Attr), StatusPass, depth, nil
				cases++
			case "failure", "error":
				if inCase > 0 {
					st, inFail = StatusFail, depth
					if body == nil {
						body = newClip(perTestHead, perTestTail)
					}
					if m := attr(t.Attr, "message"); m != "" {
						body.WriteString(m + "\n")
					}
				}
			case "skipped":
				if inCase > 0 && st != StatusFail {
					st = StatusSkip
				}
			}
		case xml.CharData:
			if inFail > 0 && body != nil {
				body.WriteString(string(t))
			}
		case xml.EndElement:
			switch {
			case t.Name.Local == "testcase" && depth == inCase:
				run.set(cur, st)
				if st == StatusFail && body != nil {
					run.keep(cur, strings.TrimSpace(body.String()), "")
				}
				inCase = 0
			case depth == inFail:
				inFail = 0
			}
			depth--
		}
	}
	if depth != 0 {
		return fmt.Errorf("parse junit report: unterminated element")
	}
	if cases == 0 && !sawSuite {
		return fmt.Errorf("parse junit report: no <testsuite> or <testcase> element")
	}
	return nil
}

func attr(attrs []xml.Attr, name string) string {
	for _, a := range attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
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

// readJUnit turns the report files of one run held in memory into
// per-test results: see readReports.
func readJUnit(files map[string]string, complete bool, pattern string) (*testRun, string) {
	var fs []reportFile
	for name, body := range files {
		fs = append(fs, reportFile{name, io.NewSectionReader(strings.NewReader(body), 0, int64(len(body)))})
	}
	return readReports(fs, complete, pattern)
}

// readReports turns the report files of one run into per-test results;
// nil and the reason when there are none or one cannot be read.
func readReports(files []reportFile, complete bool, pattern string) (*testRun, string) {
	if !complete {
		return nil, fmt.Sprintf("its JUnit report %s did not come back whole (killed, or output written after it)", pattern)
	}
	if len(files) == 0 {
		return nil, fmt.Sprintf("it wrote no JUnit report at %s", pattern)
	}
	run := newTestRun()
	for _, f := range files {
		if err := readJUnitXML(run, f.r); err != nil {
			return nil, fmt.Sprintf("%s: %v", f.name, err)
		}
	}
	return run, ""
}
