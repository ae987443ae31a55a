package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// JSON-RPC 2.0 error codes, and the two of LSP's that the connection
// itself produces.
const (
	ParseError     = -32700
	InvalidRequest = -32600
	MethodNotFound = -32601
	InvalidParams  = -32602
	InternalError  = -32603
	// RequestCancelled answers a request cancelled through Conn.Cancel
	// (LSP's $/cancelRequest).
	RequestCancelled = -32800
)

// Error is a JSON-RPC error object. A handler returns one to choose the
// code; any other error is answered as InternalError with its text.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Errorf builds an error object with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ID is a request id: a number or a string as JSON text. The zero ID is
// no id (a notification); an id written as null is an ID too, so such a
// request is answered.
type ID struct{ raw string }

// NumberID is the id n.
func NumberID(n int64) ID { return ID{strconv.FormatInt(n, 10)} }

// StringID is the id s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{string(b)}
}

// nullID answers a message whose id could not be read.
var nullID = ID{"null"}

// IsValid reports whether the ID is present.
func (id ID) IsValid() bool { return id.raw != "" }

// Number returns the id as a number, if it is one.
func (id ID) Number() (int64, bool) {
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// String is the id's JSON text ("null" for none).
func (id ID) String() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// parseID canonicalises an id's JSON text, so that 1, 1.0 and "\u0031"
// name the ids 1, 1 and "1". It reports false for anything that is not a
// string, a number or null.
func parseID(raw json.RawMessage) (ID, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ID{}, false
	}
	if plainID(raw) {
		return ID{string(raw)}, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return ID{}, false
	}
	switch x := v.(type) {
	case nil:
		return nullID, true
	case string:
		return StringID(x), true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return NumberID(n), true
		}
		if f, err := x.Float64(); err == nil && f == float64(int64(f)) {
			return NumberID(int64(f)), true
		}
		return ID{x.String()}, true
	}
	return ID{}, false
}

// plainID reports whether raw is already canonical: a short decimal
// integer without a leading zero, or a string of printable ASCII that
// json.Marshal writes as is.
func plainID(raw []byte) bool {
	if raw[0] == '"' {
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Request is an incoming request (it has an ID) or notification.
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage

	unmarshal func([]byte, any) error
}

// IsCall reports whether the request expects an answer.
func (r *Request) IsCall() bool { return r.ID.IsValid() }

// Decode decodes the params into v with the connection's codec; a
// mismatch is an InvalidParams error naming the method.
func (r *Request) Decode(v any) error {
	params := r.Params
	if len(params) == 0 {
		params = json.RawMessage("null")
	}
	unmarshal := r.unmarshal
	if unmarshal == nil {
		unmarshal = json.Unmarshal
	}
	if err := unmarshal(params, v); err != nil {
		return Errorf(InvalidParams, "%s: invalid params: %v", r.Method, err)
	}
	return nil
}

// Then is a request's result with what to do right after its answer is
// queued: what After sends goes out behind the answer.
type Then struct {
	Result any
	After  func()
}

// envelope is any incoming message, decoded loosely so that a malformed
// one can be answered precisely.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// quote is s as a JSON string, as json.Marshal writes it (plain ASCII,
// the common case of methods and messages, without its allocation).
func quote(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// envelopeSize is room for an envelope's fixed parts and a method name.
func envelopeSize(method string, payload []byte) int { return 64 + len(method) + len(payload) }

// appendCall is {"jsonrpc":"2.0","method":…,"params":…,"id":…}, the
// order go.lsp.dev/jsonrpc2 wrote (params left out when nil).
func appendCall(dst []byte, id ID, method string, params []byte) []byte {
	dst = appendNotification(dst, method, params)
	dst = append(dst[:len(dst)-1], `,"id":`...)
	dst = append(dst, id.String()...)
	return append(dst, '}')
}

// appendNotification is {"jsonrpc":"2.0","method":…,"params":…}.
func appendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = quote(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// appendResult is {"jsonrpc":"2.0","id":…,"result":…}; result null when
// empty.
func appendResult(dst []byte, id ID, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.String()...)
	dst = append(dst, `,"result":`...)
	if len(result) == 0 {
		result = []byte("null")
	}
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendError is {"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}.
func appendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.String()...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = quote(dst, e.Message)
	if len(e.Data) > 0 && json.Valid(e.Data) {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, "}}"...)
}
