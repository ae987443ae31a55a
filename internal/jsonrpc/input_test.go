package jsonrpc_test

// Bad input and the end of the stream: malformed messages and headers
// are answered and the connection goes on, an oversize frame is skipped,
// EOF inside a frame and a broken pipe end Serve.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/jsonrpc"
)

func TestMalformedMessagesAreAnsweredAndTheConnGoesOn(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<20, jsonrpc.Options{}, echo)
		for _, tc := range []struct {
			body string
			id   any
			code int
		}{
			{`{not json`, nil, jsonrpc.ParseError},
			{`{"jsonrpc":"2.0","id":1,"method":"echo"`, nil, jsonrpc.ParseError},
			{`[1,2]`, nil, jsonrpc.InvalidRequest},
			{`"hello"`, nil, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"1.0","id":2,"method":"echo"}`, 2.0, jsonrpc.InvalidRequest},
			{`{"id":3,"method":"echo"}`, 3.0, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}`, nil, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":4}`, 4.0, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":5,"method":7}`, 5.0, jsonrpc.InvalidRequest},
			{`{"jsonrpc":"2.0","id":6,"method":"nope"}`, 6.0, jsonrpc.MethodNotFound},
			{`{"jsonrpc":"2.0","id":"seven","method":"fail"}`, "seven", jsonrpc.InvalidParams},
			{`{"jsonrpc":"2.0","id":8,"method":"boom"}`, 8.0, jsonrpc.InternalError},
			{`{"jsonrpc":"2.0","id":null,"method":"fail"}`, nil, jsonrpc.InvalidParams},
		} {
			l.raw(f.frame(tc.body))
			l.expect(tc.body, tc.id, tc.code)
		}
		l.raw(f.frame(`{"jsonrpc":"2.0","id":9,"method":"echo","params":{"a":1}}`))
		if m := l.expect("echo after bad messages", 9.0, 0); string(m.Result) != `{"a":1}` {
			t.Fatalf("echo: %s", m.Result)
		}
	})
}

// TestMalformedHeadersResynchronise: each broken header is answered
// before the framer waits for more input, and it finds the next frame.
func TestMalformedHeadersResynchronise(t *testing.T) {
	l := serve(t, framings[0], 1<<20, jsonrpc.Options{}, echo)
	for _, tc := range []struct{ raw, has string }{
		{"this is not a header\r\n\r\n{}", "without a colon"},
		{"Content-Length: twelve\r\n\r\n{\"a\": 1}\r\n", "Content-Length"},
		{"Content-Length: 2\r\nX-Header: " + strings.Repeat("x", 20<<10) + "\r\n\r\n{}", "longer than"},
	} {
		l.raw(tc.raw)
		if m := l.expect(tc.has, nil, jsonrpc.ParseError); !strings.Contains(m.Error.Message, tc.has) {
			t.Errorf("%q answered %q", tc.raw, m.Error.Message)
		}
	}
	body := `{"jsonrpc":"2.0","id":4,"method":"echo","params":"four"}`
	l.raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)-5, body)) // the tail spills
	l.expect("a short Content-Length", nil, jsonrpc.ParseError)
	l.raw(framings[0].frame(`{"jsonrpc":"2.0","id":5,"method":"echo","params":"five"}`))
	l.expect("the tail in front of the next header", nil, jsonrpc.ParseError)
	l.expect("the request after it", 5.0, 0)
}

func TestOversizeFrameIsSkippedWithItsID(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<10, jsonrpc.Options{}, echo)
		l.raw(f.frame(`{"jsonrpc":"2.0","id":7,"method":"echo","params":"` + strings.Repeat("x", 200<<10) + `"}`))
		if m := l.expect("the oversize frame", 7.0, jsonrpc.InvalidRequest); !strings.Contains(m.Error.Message, "larger than the limit of 1024 bytes") {
			t.Errorf("oversize answered %q", m.Error.Message)
		}
		l.raw(f.frame(`{"jsonrpc":"2.0","id":8,"method":"echo","params":"short"}`))
		if m := l.expect("the frame after it", 8.0, 0); string(m.Result) != `"short"` {
			t.Fatalf("echo: %s", m.Result)
		}
	})
}

// TestEOFMidFrame: the input ends inside a frame: Serve ends (an error
// for a header frame cut short; a last line without its newline is still
// a message), and a call waiting for an answer gets ErrClosed.
func TestEOFMidFrame(t *testing.T) {
	for _, tc := range []struct {
		f       framing
		tail    string
		wantErr bool
	}{
		{framings[0], "Content-Length: 40\r\n\r\n{\"jsonrpc\"", true},
		{framings[0], "Content-Len", true},
		{framings[1], `{"jsonrpc":"2.0","id":1,"method":"echo","params":"last"}`, false},
	} {
		t.Run(tc.f.name, func(t *testing.T) {
			l := serve(t, tc.f, 1<<20, jsonrpc.Options{}, echo)
			waiting := make(chan error, 1)
			go func() { waiting <- l.srv.Call(context.Background(), "client/q", nil, nil) }()
			l.next() // the call is out
			l.raw(tc.tail)
			l.in.Close()
			if !tc.wantErr {
				l.expect("the last line", 1.0, 0)
			}
			select {
			case err := <-l.served:
				if (err != nil) != tc.wantErr {
					t.Fatalf("Serve = %v, want error %v", err, tc.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not end at EOF")
			}
			if err := <-waiting; !errors.Is(err, jsonrpc.ErrClosed) {
				t.Fatalf("waiting call: %v, want ErrClosed", err)
			}
		})
	}
}

// TestBrokenPipeEndsTheConn: the peer stops reading (its end of the
// output closed): the first failed write ends Serve with the error, and
// later sends fail with ErrClosed instead of queueing forever.
func TestBrokenPipeEndsTheConn(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<20, jsonrpc.Options{}, echo)
		l.out.Close()
		for l.srv.Notify("note", strings.Repeat("x", 1<<10)) == nil {
			select {
			case <-l.srv.Done():
			default:
				continue
			}
			break
		}
		select {
		case err := <-l.served:
			if err == nil || !strings.Contains(err.Error(), "write") {
				t.Fatalf("Serve = %v, want the write error", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not end after the pipe broke")
		}
		if err := l.srv.Notify("note", nil); !errors.Is(err, jsonrpc.ErrClosed) {
			t.Fatalf("Notify after the end: %v, want ErrClosed", err)
		}
	})
}

// TestMalformedAnswerFailsItsCall: an answer to one of our calls that is
// not a valid response (an error object of the wrong shape, both a result
// and an error, neither) fails that call at once with ErrBadAnswer rather
// than leaving it waiting; the peer is not answered (never answer an
// answer) and the connection goes on.
func TestMalformedAnswerFailsItsCall(t *testing.T) {
	eachFraming(t, func(t *testing.T, f framing) {
		l := serve(t, f, 1<<20, jsonrpc.Options{}, echo)
		for _, tail := range []string{
			`"error":{"code":"not a number","message":"x"}`,
			`"error":"a string"`,
			`"result":1,"error":{"code":-32603,"message":"both"}`,
			`"result":null,"error":{"code":-32603,"message":"both"}`,
			``,
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			waiting := make(chan error, 1)
			go func() { waiting <- l.srv.Call(ctx, "client/q", nil, nil) }()
			call := l.next()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%v`, call.ID)
			if tail != "" {
				body += "," + tail
			}
			l.raw(f.frame(body + "}"))
			err := <-waiting
			cancel()
			if !errors.Is(err, jsonrpc.ErrBadAnswer) || !strings.Contains(err.Error(), "client/q") {
				t.Errorf("answer %s: Call = %v, want ErrBadAnswer naming the method", body, err)
			}
		}
		// Nothing was sent back for the bad answers: the next message out
		// is the answer to this request.
		l.raw(f.frame(`{"jsonrpc":"2.0","id":"after","method":"echo","params":1}`))
		l.expect("a request after the bad answers", "after", 0)
	})
}
