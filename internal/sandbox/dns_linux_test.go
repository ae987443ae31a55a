package sandbox

import (
	"net"

	"golang.org/x/net/dns/dnsmessage"
)

// serveDNS answers every A query on pc with 192.0.2.1 (a real DNS wire
// exchange, so the DNS case needs no resolver on the machine). It ends
// when pc closes.
func serveDNS(pc net.PacketConn) {
	buf := make([]byte, 512)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if q.Type == dnsmessage.TypeA {
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60},
				dnsmessage.AResource{A: [4]byte{192, 0, 2, 1}})
		}
		msg, err := b.Finish()
		if err == nil {
			pc.WriteTo(msg, from)
		}
	}
}
