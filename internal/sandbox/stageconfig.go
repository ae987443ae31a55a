package sandbox

import (
	"strconv"
	"unicode/utf8"

	"github.com/ioh-lsp/ioh-lsp/internal/sandbox/internal/stagecfg"
)

// initConfig is what the parent hands a re-executed stage on fd 3
// (package internal/stagecfg: its fields, and the frame in which the Linux
// tiers' first stage reads it; the exec and floor stages read it as JSON).
type initConfig = stagecfg.Config

// initStatus is one JSON line the init child writes on fd 4.
type initStatus struct {
	Mechanisms []Mechanism `json:"mechanisms,omitempty"`
	Error      string      `json:"error,omitempty"`
	Done       bool        `json:"done,omitempty"`
	Exit       int         `json:"exit"`
	Signal     int         `json:"signal,omitempty"`
	CPU        int64       `json:"cpu_ns,omitempty"` // the command's CPU time, user+system
}

// privateHome is HOME inside the Linux sandbox, on its private /tmp.
const privateHome = "/tmp/home"

// appendStatusLine appends st as the JSON line encoding/json would make
// of it (apart from escaping: only what JSON requires, and invalid UTF-8
// as U+FFFD, as encoding/json does), without its reflection: a stage's
// status line costs about 50 us through json.Marshal in a fresh process,
// a few here. TestStatusLineIsJSON compares the two.
func appendStatusLine(b []byte, st initStatus) []byte {
	b = append(b, '{')
	if len(st.Mechanisms) > 0 {
		b = append(b, `"mechanisms":[`...)
		for i, m := range st.Mechanisms {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONString(b, m.Name)
			b = append(b, `,"state":`...)
			b = appendJSONString(b, m.State)
			if m.Detail != "" {
				b = append(b, `,"detail":`...)
				b = appendJSONString(b, m.Detail)
			}
			b = append(b, '}')
		}
		b = append(b, "],"...)
	}
	if st.Error != "" {
		b = append(b, `"error":`...)
		b = append(appendJSONString(b, st.Error), ',')
	}
	if st.Done {
		b = append(b, `"done":true,`...)
	}
	b = append(b, `"exit":`...)
	b = strconv.AppendInt(b, int64(st.Exit), 10)
	if st.Signal != 0 {
		b = append(b, `,"signal":`...)
		b = strconv.AppendInt(b, int64(st.Signal), 10)
	}
	if st.CPU != 0 {
		b = append(b, `,"cpu_ns":`...)
		b = strconv.AppendInt(b, st.CPU, 10)
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
