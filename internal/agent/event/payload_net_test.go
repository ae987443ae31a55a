package event

import (
	"encoding/json"
	"testing"
)

// A net_conn event round-trips through its JSON form, and the summary
// counts allowed and refused connections, each refused target once.
func TestNetConnEventAndSummary(t *testing.T) {
	in := New("r-1", "", 2, &NetConn{Host: "proxy.golang.org", Port: 443, Allowed: true, Rule: "proxy.golang.org:443", Layer: "user", BytesUp: 512, BytesDown: 3 << 20, DurationMS: 40})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Event
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	c, ok := out.Payload.(*NetConn)
	if !ok || *c != *in.Payload.(*NetConn) {
		t.Fatalf("decoded %T %+v from %s", out.Payload, out.Payload, b)
	}
	if got := c.Headline(); got != "network: proxy.golang.org:443 allowed (proxy.golang.org:443, user), 512 B up, 3.0 MiB down" {
		t.Errorf("headline %q", got)
	}
	var s NetSummary
	if s.Text() != "" {
		t.Errorf("an empty summary says %q", s.Text())
	}
	s.Add(c)
	for range 2 {
		s.Add(&NetConn{Host: "evil.example", Port: 443, Layer: "default", Reason: "no rule allows it"})
	}
	s.Add(&NetConn{Host: "::1", Port: 80, Layer: "proxy"})
	want := "network: 1 connection allowed through the proxy (512 B up, 3.0 MiB down), 3 refused: evil.example:443, [::1]:80"
	if got := s.Text(); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
