// Package trace is the durable record of runs: one SQLite database per
// workspace under the state directory (docs/trace.md), each step committed in one
// transaction, leases so two processes never drive one run, and the typed
// events the agent emits to sinks (CLI, language server) and stores.
package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	own := map[string]json.RawMessage{}
	if e.Payload != nil {
		if t := e.Payload.EventType(); t != e.Type {
			return nil, fmt.Errorf("event of type %q carries a %s payload", e.Type, t)
		}
		var err error
		if own, err = payloadFields(e.Payload); err != nil {
			return nil, err
		}
	}
	for _, k := range e.absent {
		delete(own, k)
	}
	for k, v := range e.Extra {
		if !frameKeys[k] {
			own[k] = v
		}
	}
	out := make([]Field, 0, len(own))
	for k, v := range own {
		out = append(out, Field{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// payloadFields is a payload's JSON object as its keys and values.
func payloadFields(p Payload) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", p.EventType(), err)
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", p.EventType(), err)
	}
	return m, nil
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
	var produced map[string]json.RawMessage
	if p != nil {
		if err := json.Unmarshal(b, p); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return fmt.Errorf("decode %s event: %w", e.Type, err)
			}
		}
		var err error
		if produced, err = payloadFields(p); err != nil {
			return fmt.Errorf("decode %s event: %w", e.Type, err)
		}
		e.Payload = p
	}
	for k, v := range m {
		if pv, ok := produced[k]; ok && bytes.Equal(compact(pv), compact(v)) {
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
