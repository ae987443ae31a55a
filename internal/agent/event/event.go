// Package event is the vocabulary of a run's record: the Event frame,
// its JSON Lines form (docs/trace-json.md), one payload struct per event
// type, and the Sink events are emitted to. It is a leaf: the store
// (internal/agent/trace), the renderer (internal/agent/render) and every
// front end import it, and it imports nothing of theirs.
package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Event is one thing that happened in a run: the frame (run, parent,
// step, type, time) and its typed payload. MarshalJSON flattens the
// payload's fields next to the frame, which is the JSON Lines shape of
// `ioh-lsp trace --json` (docs/trace-json.md).
type Event struct {
	Run    string
	Parent string // the parent run's id; "" for a root run
	Step   int
	Type   string
	Time   time.Time
	// Payload is the event's own fields: a pointer to the payload type of
	// Type (payload.go), nil for a type this build does not know.
	Payload Payload
	// Extra holds the fields of a decoded event its payload does not
	// reproduce exactly (written by another version); MarshalJSON writes
	// them back as they were read.
	Extra map[string]json.RawMessage
	// absent lists the keys the payload writes that a decoded event did
	// not have: MarshalJSON leaves them out, so a stored event reads
	// back and prints as it was written.
	absent []string
}

// New returns an event of run carrying p, stamped now.
func New(run, parent string, step int, p Payload) Event {
	return Event{Run: run, Parent: parent, Step: step, Type: p.EventType(), Time: time.Now(), Payload: p}
}

// frameKeys are the keys of the frame, never a payload's.
var frameKeys = map[string]bool{"run": true, "parent": true, "step": true, "type": true, "time": true}

// Field is one of an event's own fields: its key and its JSON value.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Fields returns the event's own fields (its payload's and Extra),
// sorted by key: what MarshalJSON writes beside the frame, and what
// the renderer shows.
func (e Event) Fields() ([]Field, error) {
	var own []Field
	if e.Payload != nil {
		if t := e.Payload.EventType(); t != e.Type {
			return nil, fmt.Errorf("event of type %q carries a %s payload", e.Type, t)
		}
		var err error
		if own, err = payloadFields(e.Payload); err != nil {
			return nil, err
		}
	}
	if len(e.absent) > 0 || len(e.Extra) > 0 {
		kept := own[:0]
		for _, f := range own {
			if _, over := e.Extra[f.Key]; !over && !slices.Contains(e.absent, f.Key) {
				kept = append(kept, f)
			}
		}
		own = kept
		for k, v := range e.Extra {
			if !frameKeys[k] {
				own = append(own, Field{k, v})
			}
		}
	}
	sort.Slice(own, func(i, j int) bool { return own[i].Key < own[j].Key })
	return own, nil
}

// payloadFields is a payload's JSON object as its members, in the
// order encoding/json writes them.
func payloadFields(p Payload) ([]Field, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", p.EventType(), err)
	}
	if fs, ok := members(b); ok {
		return fs, nil
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", p.EventType(), err)
	}
	fs := make([]Field, 0, len(m))
	for k, v := range m {
		fs = append(fs, Field{k, v})
	}
	return fs, nil
}

// members splits a compact JSON object, as encoding/json writes one,
// into its members without decoding the values; false for anything else
// (spaces, a key that is escaped or not plain ASCII), which the caller
// then decodes the slow way.
func members(b []byte) ([]Field, bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	var out []Field
	i := 1
	for i < len(b)-1 {
		if b[i] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(b[i+1:], '"')
		if end < 0 {
			return nil, false
		}
		key := string(b[i+1 : i+1+end])
		for _, c := range key {
			if c < ' ' || c == '\\' || c >= 0x7f {
				return nil, false // escaped or not plain ASCII: not a key a payload writes
			}
		}
		i += end + 2
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i++
		start := i
		i = valueEnd(b, i)
		if i <= start || i >= len(b) {
			return nil, false
		}
		out = append(out, Field{key, json.RawMessage(b[start:i])})
		if b[i] == ',' {
			i++
			if i >= len(b)-1 {
				return nil, false // a trailing comma
			}
		}
	}
	return out, i == len(b)-1
}

// valueEnd returns where the compact JSON value starting at b[i] ends:
// the index of the comma or closing brace after it; -1 at a space
// outside a string.
func valueEnd(b []byte, i int) int {
	depth, inString := 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return -1
		case c == '{' || c == '[':
			depth++
		case (c == '}' || c == ']') && depth == 0, c == ',' && depth == 0:
			return i
		case c == '}' || c == ']':
			depth--
		}
	}
	return i
}

// MarshalJSON writes the event as one flat object, its keys sorted.
func (e Event) MarshalJSON() ([]byte, error) {
	fields, err := e.Fields()
	if err != nil {
		return nil, err
	}
	frame := []Field{
		{"run", jsonString(e.Run)},
		{"step", json.RawMessage(fmt.Sprint(e.Step))},
		{"time", jsonString(e.Time.UTC().Format(time.RFC3339Nano))},
		{"type", jsonString(e.Type)},
	}
	if e.Parent != "" {
		frame = append(frame, Field{"parent", jsonString(e.Parent)})
	}
	all := append(fields, frame...)
	sort.Slice(all, func(i, j int) bool { return all[i].Key < all[j].Key })
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range all {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(f.Key))
		b.WriteByte(':')
		b.Write(f.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

// UnmarshalJSON reads the flat form back: the frame, the payload of its
// type, and in Extra what the payload does not reproduce. A frame key of
// the wrong type is left zero, as is a payload field of the wrong type.
func (e *Event) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("decode event: %w", err)
	}
	if m == nil {
		return errors.New("decode event: not an object")
	}
	*e = Event{}
	json.Unmarshal(m["run"], &e.Run)
	json.Unmarshal(m["parent"], &e.Parent)
	json.Unmarshal(m["type"], &e.Type)
	var step float64
	if json.Unmarshal(m["step"], &step) == nil {
		e.Step = int(step)
	}
	var ts string
	if json.Unmarshal(m["time"], &ts) == nil {
		e.Time, _ = time.Parse(time.RFC3339Nano, ts)
	}
	for k := range frameKeys {
		delete(m, k)
	}
	p := payloadFor(e.Type, func(k string) bool { _, ok := m[k]; return ok })
	produced := map[string]json.RawMessage{}
	if p != nil {
		if err := json.Unmarshal(b, p); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return fmt.Errorf("decode %s event: %w", e.Type, err)
			}
		}
		fs, err := payloadFields(p)
		if err != nil {
			return fmt.Errorf("decode %s event: %w", e.Type, err)
		}
		for _, f := range fs {
			produced[f.Key] = f.Value
		}
		e.Payload = p
	}
	for k, v := range m {
		if pv, ok := produced[k]; ok && (bytes.Equal(pv, v) || bytes.Equal(pv, compact(v))) {
			continue
		}
		if e.Extra == nil {
			e.Extra = map[string]json.RawMessage{}
		}
		e.Extra[k] = v
	}
	for k := range produced {
		if _, ok := m[k]; !ok {
			e.absent = append(e.absent, k)
		}
	}
	return nil
}

// compact is v without insignificant space (v itself when it has none
// or is not valid JSON).
func compact(v json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// Sink receives events as they happen. Emit must not block for long; it is
// called from the run's goroutine.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }
