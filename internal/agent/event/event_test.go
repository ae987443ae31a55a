package event

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// corpus reads testdata/events-v1.jsonl: events as the map-based encoder
// of the previous version stored them, one of every type and variant,
// plus a few a later version or a damaged row could hold.
func corpus(t *testing.T) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/events-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			out = append(out, append([]byte(nil), line...))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every stored event of the previous version decodes into its payload
// struct and prints again byte for byte. The payload structs reproduce
// every field of every variant exactly (nothing left in Extra), except
// where the row holds what no version wrote: a later version's field, a
// type this build does not know, a field of the wrong type, a number
// spelled differently. Those survive too.
func TestStoredEventsReadBackUnchanged(t *testing.T) {
	extra := map[string][]string{ // a marker in the line: the keys it leaves in Extra
		`"future_field"`:    {"future_field"},
		`"from_the_future"`: {"n", "some"},
		`"bytes":"many"`:    {"bytes", "is_error"},
		`"cost_usd":0.0200`: {"cost_usd"},
	}
	seen := map[string]bool{}
	for _, line := range corpus(t) {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		seen[e.Type] = true
		var wantExtra []string
		for marker, keys := range extra {
			if bytes.Contains(line, []byte(marker)) {
				wantExtra = keys
			}
		}
		var gotExtra []string
		for k := range e.Extra {
			gotExtra = append(gotExtra, k)
		}
		sort.Strings(gotExtra)
		if !reflect.DeepEqual(gotExtra, wantExtra) {
			t.Errorf("%s:\nfields left in Extra %v, want %v", line, gotExtra, wantExtra)
		}
		if e.Type != "from_the_future" && e.Payload == nil {
			t.Errorf("%s: no payload", line)
		}
		if e.Payload != nil && e.Payload.EventType() != e.Type {
			t.Errorf("%s: a %s payload", line, e.Payload.EventType())
		}
		back, err := json.Marshal(e)
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if !bytes.Equal(back, line) {
			t.Errorf("read back and printed:\n got %s\nwant %s", back, line)
		}
	}
	for _, typ := range []string{TypeRunStarted, TypeWarning, TypeModelTurn, TypeToolCall, TypeToolResult, TypePolicy,
		TypeBudget, TypeBudgetRaised, TypeRetry, TypeVerification, TypeProposal, TypeApproval, TypeApplyMismatch,
		TypeAgentSpawned, TypeOutcome} {
		if !seen[typ] {
			t.Errorf("the corpus has no %s event", typ)
		}
	}
}

// The payloads decode into the fields a reader uses.
func TestStoredEventsDecodeTyped(t *testing.T) {
	byType := map[string][]Event{}
	for _, line := range corpus(t) {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		byType[e.Type] = append(byType[e.Type], e)
	}
	b := byType[TypeBudget][1].Payload.(*Budget)
	if b.RootCostUSD != 0.0066 || b.RootTokens != 2200 || !b.RootCostKnown || b.CostUSD == nil || *b.CostUSD != 0.0033 ||
		b.Limits() != (BudgetLimits{LimitSteps: 40, LimitTokens: 400000, LimitCostUSD: 2, LimitWall: "15m0s"}) {
		t.Errorf("budget %+v limits %+v", b, b.Limits())
	}
	if u := byType[TypeBudget][2].Payload.(*Budget); u.CostUSD != nil || u.RootCostKnown || byType[TypeBudget][0].Payload.(*Budget).BudgetLimits != nil {
		t.Errorf("an unpriced call or a run without limits read wrong: %+v", u)
	}
	if r := byType[TypeRetry][0].Payload.(*Retry); r.RetryAttempt == nil || r.Error != "429 too many requests" || r.DelayMS != 1500 {
		t.Errorf("retry %+v", r)
	}
	c := byType[TypeVerification][0].Payload.(*CheckRun)
	if c.Check != "unit" || len(c.Locations) != 2 || c.Locations[0].Col != 3 || c.Tests == nil || c.Tests.Failed[0] != "TestParse" {
		t.Errorf("check run %+v", c)
	}
	v := byType[TypeVerification][2].Payload.(*Verdict)
	if len(v.Checks) != 2 || v.Checks[1].Downgrade == "" || v.Checks[0].Tests.FailedMore != 3 || v.Checks[0].Locations != 2 {
		t.Errorf("verdict %+v", v)
	}
	if s := byType[TypeRunStarted][3]; s.Parent != "r-1a2b3c" || s.Payload.(*RunStarted).Depth != 1 || s.Payload.(*RunStarted).RunModel != nil {
		t.Errorf("a sub-agent's run_started %+v", s)
	}
	if a := byType[TypeApproval][1].Payload.(*Approval); !a.Recorded || a.Reason != "not now" || a.Change {
		t.Errorf("approval %+v", a)
	}
	if r := byType[TypeBudgetRaised][0].Payload.(*BudgetRaised); r.To.Wall != "10m0s" || r.To.CostUSD != 1.5 || r.Was != "budget_exceeded" {
		t.Errorf("budget_raised %+v", r)
	}
}

// fill sets every field of v (recursively) to a value that is not
// empty, so its JSON holds every key the type can write.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i))
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	}
}

// Every key a payload writes is named in docs/trace-json.md on its
// type's row: a field added to a payload and not documented fails here.
func TestEveryFieldIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/trace-json.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(doc), "\n") {
		if m := regexp.MustCompile("^\\| `([a-z_]+)` \\|").FindStringSubmatch(l); m != nil {
			rows[m[1]] = l
		}
	}
	payloads := []Payload{&RunStarted{}, &Warning{}, &ModelTurn{}, &ToolCall{}, &ToolResult{}, &Policy{}, &Budget{},
		&BudgetRaised{}, &Retry{}, &CheckRun{}, &Verdict{}, &Proposal{}, &Approval{}, &ApplyMismatch{}, &AgentSpawned{}, &Outcome{}, &Undo{}, &TextDelta{}, &NetConn{}, &CheckStarted{}}
	for _, p := range payloads {
		fill(reflect.ValueOf(p).Elem())
		e := New("r-1", "", 1, p)
		fields, err := e.Fields()
		if err != nil {
			t.Fatal(err)
		}
		row, ok := rows[e.Type]
		if !ok {
			t.Errorf("docs/trace-json.md has no row for %s", e.Type)
			continue
		}
		for _, f := range fields {
			if !strings.Contains(row, "`"+f.Key+"`") {
				t.Errorf("%s (%T) writes %q, which its row in docs/trace-json.md does not name", e.Type, p, f.Key)
			}
		}
	}
}

// Bad input is an error, never a panic; an event whose payload does not
// match its type does not encode.
func TestEventRejectsBadInput(t *testing.T) {
	for _, in := range []string{``, `null`, `[]`, `"x"`, `{"run":`} {
		var e Event
		if err := json.Unmarshal([]byte(in), &e); err == nil {
			t.Errorf("%q decoded: %+v", in, e)
		}
	}
	e := Event{Run: "r", Type: TypeBudget, Payload: &Outcome{}}
	if _, err := json.Marshal(e); err == nil || !strings.Contains(err.Error(), "outcome payload") {
		t.Errorf("a budget event with an outcome payload: %v", err)
	}
	// A frame field of the wrong type is left zero.
	var w Event
	if err := json.Unmarshal([]byte(`{"run":5,"step":"two","time":false,"type":"warning","message":"m"}`), &w); err != nil {
		t.Fatal(err)
	}
	if w.Run != "" || w.Step != 0 || !w.Time.IsZero() || w.Payload.(*Warning).Message != "m" {
		t.Errorf("lenient frame: %+v", w)
	}
}

// The frame: sorted keys, parent only for a sub-agent, UTC time.
func TestEventFrame(t *testing.T) {
	at := time.Date(2026, 11, 30, 17, 0, 0, 5, time.FixedZone("x", 3600))
	e := Event{Run: "r-2", Parent: "r-1", Step: 3, Type: TypeWarning, Time: at, Payload: &Warning{Message: "<m>"}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"message":"\u003cm\u003e","parent":"r-1","run":"r-2","step":3,"time":"2026-11-30T16:00:00.000000005Z","type":"warning"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// Decoding then encoding is a fixed point, whatever the input.
func FuzzEventJSON(f *testing.F) {
	lines, _ := os.ReadFile("testdata/events-v1.jsonl")
	for _, l := range bytes.Split(lines, []byte("\n")) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var e Event
		if json.Unmarshal(in, &e) != nil {
			return
		}
		once, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("%s decoded but does not encode: %v", in, err)
		}
		var again Event
		if err := json.Unmarshal(once, &again); err != nil {
			t.Fatalf("%s: its encoding %s does not decode: %v", in, once, err)
		}
		twice, err := json.Marshal(again)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("%s: encodes as %s, then %s (%v)", in, once, twice, err)
		}
	})
}

// members splits a valid JSON object exactly as decoding it would (or
// declines it), and never panics on anything else.
func FuzzMembers(f *testing.F) {
	for _, line := range corpus(&testing.T{}) {
		f.Add(line)
	}
	f.Add([]byte(`{"a\"b":1}`))
	f.Add([]byte(`{"a":"}\\"","b":[{"c":"]"}]}`))
	f.Add([]byte(`{"a":1,}`))
	f.Add([]byte(`{"a" :1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		fs, ok := members(in)
		if !ok || !json.Valid(in) {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in, &m); err != nil {
			t.Fatalf("%s: split into %d members but is not an object: %v", in, len(fs), err)
		}
		split := map[string]json.RawMessage{}
		for _, f := range fs {
			split[f.Key] = f.Value // the last of a repeated key, as decoding keeps
		}
		if len(split) != len(m) {
			t.Fatalf("%s: %d members, decoding finds %d", in, len(split), len(m))
		}
		for k, v := range split {
			if !bytes.Equal(v, m[k]) {
				t.Fatalf("%s: member %q = %s, decoding finds %s", in, k, v, m[k])
			}
		}
	})
}
