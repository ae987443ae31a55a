package telemetry

// The protobuf wire format, as much of it as OTLP/HTTP needs
// (https://protobuf.dev/programming-guides/encoding/): varints, fixed
// 32- and 64-bit words and length-delimited fields to write a request,
// and a reader that walks one message's fields to read the collector's
// reply. Written out here rather than imported: google.golang.org/protobuf
// (its registry, reflection and the generated OTLP types) ran a dozen
// package initializers on every start of the binary, whatever the
// command, for a feature that is off unless an endpoint is configured.

// wireType is a field's wire type, the low three bits of its tag.
type wireType uint8

const (
	wireVarint  wireType = 0
	wireFixed64 wireType = 1
	wireBytes   wireType = 2
	wireFixed32 wireType = 5
)

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendTag(b []byte, num int, t wireType) []byte {
	return appendVarint(b, uint64(num)<<3|uint64(t))
}

// The append*Field helpers write a proto3 scalar field, leaving it out
// when it holds its type's zero value as proto3 does.

func appendVarintField(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendVarint(appendTag(b, num, wireVarint), v)
}

func appendFixed32Field(b []byte, num int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return append(appendTag(b, num, wireFixed32), byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendFixed64Field(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendFixed64(appendTag(b, num, wireFixed64), v)
}

func appendFixed64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

func appendStringField(b []byte, num int, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(b, num, s)
}

func appendBytesField(b []byte, num int, p []byte) []byte {
	if len(p) == 0 {
		return b
	}
	return appendString(b, num, string(p))
}

// appendString writes a length-delimited field even when it is empty (a
// member of a oneof is present whatever its value).
func appendString(b []byte, num int, s string) []byte {
	b = appendVarint(appendTag(b, num, wireBytes), uint64(len(s)))
	return append(b, s...)
}

// appendMessage writes field num holding the embedded message that enc
// appends, present even when empty. The message is encoded in place
// after a one-byte length, which is moved along when the message turns
// out 128 bytes or longer.
func appendMessage(b []byte, num int, enc func([]byte) []byte) []byte {
	b = appendTag(b, num, wireBytes)
	at := len(b)
	b = enc(append(b, 0))
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	var lb [10]byte
	l := appendVarint(lb[:0], uint64(n))
	b = append(b, l[1:]...)
	copy(b[at+len(l):], b[at+1:at+1+n])
	copy(b[at:], l)
	return b
}

// consumeVarint reads a varint at the start of b: its value and length,
// or a length of -1 when b ends inside it or it overflows 64 bits.
func consumeVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, -1
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// nextField splits the first field off a message: its number, wire type,
// value (a varint's or fixed word's bytes, a length-delimited field's
// contents) and the rest of the message; ok is false when b does not
// start with a well-formed field of a wire type this reader knows (the
// deprecated group types included, which OTLP never uses).
func nextField(b []byte) (num uint64, t wireType, val, rest []byte, ok bool) {
	tag, n := consumeVarint(b)
	if n < 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
		return 0, 0, nil, nil, false
	}
	num, t, b = tag>>3, wireType(tag&7), b[n:]
	switch t {
	case wireVarint:
		_, n = consumeVarint(b)
		if n < 0 {
			return 0, 0, nil, nil, false
		}
		return num, t, b[:n], b[n:], true
	case wireFixed64, wireFixed32:
		size := 8
		if t == wireFixed32 {
			size = 4
		}
		if len(b) < size {
			return 0, 0, nil, nil, false
		}
		return num, t, b[:size], b[size:], true
	case wireBytes:
		l, n := consumeVarint(b)
		if n < 0 || l > uint64(len(b)-n) {
			return 0, 0, nil, nil, false
		}
		end := n + int(l)
		return num, t, b[n:end], b[end:], true
	}
	return 0, 0, nil, nil, false
}

// field returns the value of the last occurrence of field num of wire type
// t in message b (as nextField gives it), false when b holds none or is
// not a well-formed message.
func field(b []byte, num uint64, t wireType) ([]byte, bool) {
	var out []byte
	found := false
	for len(b) > 0 {
		n, ft, v, rest, ok := nextField(b)
		if !ok {
			return nil, false
		}
		if n == num && ft == t {
			out, found = v, true
		}
		b = rest
	}
	return out, found
}
