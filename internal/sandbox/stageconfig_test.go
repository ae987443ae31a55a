package sandbox

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestStatusLineIsJSON: the stage's hand-made status line decodes to the
// same status as encoding/json's, for names and details with quotes,
// backslashes, every control and ASCII character, HTML characters,
// multi-byte and invalid UTF-8; the caller reads it with encoding/json.
func TestStatusLineIsJSON(t *testing.T) {
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	odd := []string{"", "plain", `"quoted" \back\slash`, all.String(), "<a href='x'>&amp;</a>", "héllo wörld ✓ 🙂",
		"bad \xff\xfe utf8 \xc3", "\u2028\u2029", "tab\tnew\nline\rcr"}
	var sts []initStatus
	for _, s := range odd {
		sts = append(sts,
			initStatus{Mechanisms: []Mechanism{{s, StateApplied, s}, {"n", s, ""}}},
			initStatus{Error: s},
		)
	}
	sts = append(sts, initStatus{}, initStatus{Done: true, Exit: -1, Signal: 9, CPU: math.MaxInt64},
		initStatus{Done: true, Exit: 255, CPU: -5})
	for _, st := range sts {
		line := appendStatusLine(nil, st)
		if !bytes.HasSuffix(line, []byte("}\n")) || bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("not one line: %q", line)
		}
		ref, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var got, want initStatus
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q decodes to\n%+v\nencoding/json's %q to\n%+v", line, got, ref, want)
		}
		// The same fields, no more: compared as generic JSON too.
		var gm, wm map[string]any
		_ = json.Unmarshal(line, &gm)
		_ = json.Unmarshal(ref, &wm)
		if !reflect.DeepEqual(gm, wm) {
			t.Fatalf("line %q, encoding/json %q", line, ref)
		}
	}
}
