package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
)

// errSlowPath: the envelope needs encoding/json (a key that is escaped
// or in another case, a string value with escapes, a body that is not an
// object).
var errSlowPath = errors.New("decode with encoding/json")

// errNotString: a string member holds another type (what json.Unmarshal
// reports as an UnmarshalTypeError).
var errNotString = errors.New("a string member holds another type")

// unmarshalEnvelope decodes a valid JSON body into m as json.Unmarshal
// would, without reflection for the common shape: one pass over the
// top-level members, params, result and id kept as raw spans.
func unmarshalEnvelope(body []byte, m *envelope) error {
	err := scanEnvelope(body, m)
	if errors.Is(err, errSlowPath) {
		*m = envelope{}
		return json.Unmarshal(body, m)
	}
	return err
}

func scanEnvelope(b []byte, m *envelope) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errSlowPath
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		keyEnd := skipValue(b, i)
		key := b[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return errSlowPath
		}
		i = skipSpace(b, keyEnd)
		i = skipSpace(b, i+1) // the colon
		end := skipValue(b, i)
		if err := m.set(string(key), b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] == '}' {
			return nil
		}
		i = skipSpace(b, i+1) // the comma
	}
	return nil
}

// set stores one member; v is its raw value.
func (m *envelope) set(key string, v []byte) error {
	switch key {
	case "jsonrpc":
		return rawString(v, &m.JSONRPC)
	case "method":
		return rawString(v, &m.Method)
	case "id":
		m.ID = bytes.Clone(v)
	case "params":
		m.Params = bytes.Clone(v)
	case "result":
		m.Result = bytes.Clone(v)
	case "error":
		if string(v) == "null" {
			m.Error = nil
			return nil
		}
		if m.Error == nil {
			m.Error = new(Error)
		}
		return json.Unmarshal(v, m.Error) // a repeated member merges, as in json.Unmarshal
	default:
		for i := 0; i < len(key); i++ {
			if key[i] >= 0x80 {
				return errSlowPath // encoding/json folds some non-ASCII letters too ("ſ" is "s")
			}
		}
		for _, k := range []string{"jsonrpc", "method", "id", "params", "result", "error", "data"} {
			if len(key) == len(k) && bytes.EqualFold([]byte(key), []byte(k)) {
				return errSlowPath // encoding/json matches keys in any case
			}
		}
	}
	return nil
}

// rawString decodes a string value without escapes; null leaves s.
func rawString(v []byte, s *string) error {
	switch {
	case string(v) == "null":
		return nil
	case v[0] != '"':
		return errNotString
	case bytes.IndexByte(v, '\\') >= 0:
		return errSlowPath
	}
	*s = string(v[1 : len(v)-1])
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the value at b[i] in a valid document.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return i
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[i])) {
		i++
	}
	return i
}
