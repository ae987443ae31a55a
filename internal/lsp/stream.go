package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"go.lsp.dev/jsonrpc2"
)

// MaxMessageSize caps the body of one incoming JSON-RPC message. A larger
// one is skipped without being buffered (the body is read and discarded)
// and answered with an error; the session goes on.
const MaxMessageSize = 64 << 20

const (
	// maxHeaderLine caps one header line; a longer one is malformed.
	maxHeaderLine = 8 << 10
	// maxHeaderLines caps the lines of one header block.
	maxHeaderLines = 32
	// idPeek is how much of an oversized body is kept to find its id.
	idPeek = 4 << 10
	// keepBuffer is the largest body buffer kept between messages.
	keepBuffer = 1 << 20
)

// contentLength is the header that starts every frame, lowercased.
const contentLength = "content-length:"

// NewStream is the server's JSON-RPC stream over rwc: the LSP base
// protocol's Content-Length framing, read so that hostile or broken input
// never ends the session while the framing still allows going on:
//
//   - a body that is not JSON is answered with -32700 (parse error, id
//     null), one that is JSON but not a JSON-RPC message with -32600 (its
//     id when it has one), and reading continues with the next frame;
//   - a body over MaxMessageSize is read and discarded, never buffered,
//     and answered with -32600 naming the limit (with its id when the
//     first bytes hold one);
//   - a malformed header (a line without a colon, a Content-Length that is
//     not a number, a line over 8 KiB, no Content-Length) is logged and
//     answered with -32700, and the reader resynchronises at the next
//     line holding "Content-Length:".
//
// Only the end of the input (or a read error) ends the stream. Writes use
// go.lsp.dev/jsonrpc2's header framing.
func NewStream(rwc io.ReadWriteCloser, log *slog.Logger) jsonrpc2.Stream {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &stream{
		out: jsonrpc2.NewHeaderStream(writeCloser{rwc}),
		in:  bufio.NewReaderSize(rwc, 64<<10),
		rwc: rwc,
		log: log,
	}
}

// writeCloser hides the reader from the write-side stream, so that only
// this package's reader ever reads the connection.
type writeCloser struct{ rwc io.ReadWriteCloser }

func (w writeCloser) Read([]byte) (int, error)    { return 0, io.EOF }
func (w writeCloser) Write(p []byte) (int, error) { return w.rwc.Write(p) }
func (w writeCloser) Close() error                { return w.rwc.Close() }

type stream struct {
	out jsonrpc2.Stream
	in  *bufio.Reader
	rwc io.ReadWriteCloser
	log *slog.Logger

	body []byte // reused body buffer; a decoded request borrows it until the next Read
	// pending is a header line found while resynchronising, to be read
	// as the first line of the next header block.
	pending []byte
}

// errSkipped says a frame was rejected (and answered): read the next one.
var errSkipped = errors.New("frame skipped")

// headerError is a malformed header block.
type headerError struct{ msg string }

func (e *headerError) Error() string { return "malformed message header: " + e.msg }

// Read implements jsonrpc2.Stream.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		body, n, err := s.readFrame(ctx)
		if errors.Is(err, errSkipped) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			s.rejectBody(ctx, body)
			continue
		}
		return msg, n, nil
	}
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.out.Write(ctx, msg)
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error { return s.rwc.Close() }

// readFrame reads one frame's body. A malformed header or an oversized
// body is answered and reported as errSkipped.
func (s *stream) readFrame(ctx context.Context) ([]byte, int64, error) {
	length, hdr, err := s.readHeader()
	var he *headerError
	if errors.As(err, &he) {
		s.log.Warn("json-rpc input: skipping to the next Content-Length header", "err", err)
		s.answer(ctx, jsonrpc2.ID{}, jsonrpc2.NewError(jsonrpc2.ParseError, err.Error()))
		if err := s.resync(); err != nil {
			return nil, 0, err
		}
		return nil, 0, errSkipped
	}
	if err != nil {
		return nil, 0, err
	}
	if length > MaxMessageSize {
		return nil, 0, s.skipBody(ctx, length)
	}
	if cap(s.body) < int(length) || cap(s.body) > keepBuffer {
		s.body = make([]byte, length)
	}
	body := s.body[:length]
	if _, err := io.ReadFull(s.in, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, err
	}
	return body, int64(hdr) + length, nil
}

// skipBody discards an oversized body, keeping only its first bytes to
// find the request's id, and answers it.
func (s *stream) skipBody(ctx context.Context, length int64) error {
	peek := make([]byte, min(length, idPeek))
	if _, err := io.ReadFull(s.in, peek); err != nil {
		return io.ErrUnexpectedEOF
	}
	if n, err := io.CopyN(io.Discard, s.in, length-int64(len(peek))); err != nil || n != length-int64(len(peek)) {
		return io.ErrUnexpectedEOF
	}
	msg := fmt.Sprintf("message of %d bytes is larger than the limit of %d bytes; it was skipped", length, MaxMessageSize)
	s.log.Warn("json-rpc input: "+msg, "id", peekID(peek))
	s.answer(ctx, peekID(peek), jsonrpc2.NewError(jsonrpc2.InvalidRequest, msg))
	return errSkipped
}

// rejectBody answers a frame whose body is not a JSON-RPC message.
func (s *stream) rejectBody(ctx context.Context, body []byte) {
	if !json.Valid(body) {
		s.log.Warn("json-rpc input: a message body is not valid JSON", "bytes", len(body))
		s.answer(ctx, jsonrpc2.ID{}, jsonrpc2.NewError(jsonrpc2.ParseError, "parse error: the message body is not valid JSON"))
		return
	}
	id := peekID(body)
	s.log.Warn("json-rpc input: not a JSON-RPC 2.0 message", "id", id)
	s.answer(ctx, id, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "invalid request: not a JSON-RPC 2.0 request, notification or response"))
}

// answer writes an error response; a failure to write is left for the
// connection's own next write to find.
func (s *stream) answer(ctx context.Context, id jsonrpc2.ID, e *jsonrpc2.Error) {
	if _, err := s.out.Write(context.WithoutCancel(ctx), jsonrpc2.NewResponse(id, nil, e)); err != nil {
		s.log.Warn("json-rpc input: answer a rejected message", "err", err)
	}
}

// readHeader reads a header block and returns the Content-Length and the
// bytes consumed. Blank lines before a block are skipped. io.EOF before
// any header byte is the clean end of the stream.
func (s *stream) readHeader() (length int64, consumed int, err error) {
	length = -1
	for lines := 0; ; {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && consumed > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, 0, err
		}
		consumed += len(line)
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			if lines == 0 {
				continue // a stray line break between frames
			}
			break
		}
		if i := indexFold(line, contentLength); i > 0 {
			// Bytes before a header (the tail of a body whose
			// Content-Length was short): start over at the header.
			s.pending = append([]byte(nil), line[i:]...)
			return 0, 0, &headerError{"bytes before a Content-Length header"}
		}
		if lines++; lines > maxHeaderLines {
			return 0, 0, &headerError{fmt.Sprintf("more than %d header lines", maxHeaderLines)}
		}
		name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		if !ok {
			return 0, 0, &headerError{"a header line without a colon"}
		}
		if !bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if err != nil || n < 0 {
			return 0, 0, &headerError{"Content-Length is not a non-negative decimal number"}
		}
		length = n
	}
	if length < 0 {
		return 0, 0, &headerError{"no Content-Length"}
	}
	return length, consumed, nil
}

// readLine returns the next line, its line break included: the pending
// line of a resynchronisation first. A line longer than maxHeaderLine is
// malformed (and consumed up to its end).
func (s *stream) readLine() ([]byte, error) {
	if s.pending != nil {
		line := s.pending
		s.pending = nil
		return line, nil
	}
	line, err := s.in.ReadSlice('\n')
	switch {
	case err == nil:
		if len(line) > maxHeaderLine {
			return nil, &headerError{fmt.Sprintf("a header line longer than %d bytes", maxHeaderLine)}
		}
		return line, nil
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, &headerError{fmt.Sprintf("a header line longer than %d bytes", maxHeaderLine)}
	case errors.Is(err, io.EOF) && len(line) > 0:
		return nil, io.ErrUnexpectedEOF
	}
	return nil, err
}

// resync discards input up to the next "Content-Length:" (in any case),
// which becomes the pending first line of the next header block. Memory
// stays bounded: the input is scanned a buffer at a time, keeping only
// enough of each to find a header split across two reads.
func (s *stream) resync() error {
	if s.pending != nil {
		return nil // the header that showed the error starts the next block
	}
	var carry []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				return io.EOF // the input ended while skipping garbage
			}
			return err
		}
		window := append(carry, chunk...)
		if i := indexFold(window, contentLength); i >= 0 {
			if err == nil { // the header's line is complete
				s.pending = append([]byte(nil), window[i:]...)
				return nil
			}
			// The header line goes on past the buffer: keep its start.
			carry = append([]byte(nil), window[i:]...)
			if len(carry) > maxHeaderLine {
				carry = nil // too long to be a header line
			}
			continue
		}
		keep := min(len(window), len(contentLength)-1)
		carry = append([]byte(nil), window[len(window)-keep:]...)
	}
}

// indexFold is bytes.Index ignoring ASCII case; sub is lowercase.
func indexFold(b []byte, sub string) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(sub)], []byte(sub)) {
			return i
		}
	}
	return -1
}

// peekID finds a top-level "id" (a number or a string) in a message or the
// start of one; the zero ID (null) when there is none before the bytes
// end.
func peekID(b []byte) jsonrpc2.ID {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc2.ID{}
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return jsonrpc2.ID{}
		}
		key, _ := t.(string)
		if key != "id" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return jsonrpc2.ID{}
			}
			continue
		}
		v, err := dec.Token()
		if err != nil {
			return jsonrpc2.ID{}
		}
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return jsonrpc2.NewNumberID(n)
			}
		case string:
			return jsonrpc2.NewStringID(x)
		}
		return jsonrpc2.ID{}
	}
	return jsonrpc2.ID{}
}
