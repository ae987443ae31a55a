package workspace

// indexPrivacy keeps secrets out of the index file. The trigrams of a
// file spell out much of what it holds, and the index lives under the
// state directory, where no configured secret may be written in any
// encoding. A file it names is never indexed: it is flagged unindexed,
// so every search reads it directly, and results stay exactly a scan's.
type indexPrivacy struct {
	// private reports root-relative paths never to index (files the read
	// policy guards, such as .env files and keys).
	private func(rel string) bool
	// secrets holds each configured secret's distinct trigrams.
	secrets [][]uint32
}

func newIndexPrivacy(o IndexOptions) *indexPrivacy {
	p := &indexPrivacy{private: o.Private}
	for _, s := range o.Secrets {
		if len(s) < 3 {
			continue // no trigram; too short to be a real secret anyway
		}
		seen := map[uint32]bool{}
		var tris []uint32
		for i := 0; i+3 <= len(s); i++ {
			t := uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
			if !seen[t] {
				seen[t] = true
				tris = append(tris, t)
			}
		}
		p.secrets = append(p.secrets, tris)
	}
	return p
}

// named reports whether rel must never be indexed by its name.
func (p *indexPrivacy) named(rel string) bool {
	return p != nil && p.private != nil && p.private(rel)
}

// holds reports whether the file whose trigrams tb just collected may
// contain a secret: every trigram of some secret occurs in it. That can
// say yes for a file without the secret, never no for one with it.
func (p *indexPrivacy) holds(tb *trigramBits) bool {
	if p == nil {
		return false
	}
	for _, tris := range p.secrets {
		all := true
		for _, t := range tris {
			if tb.bits[t>>6]&(1<<(t&63)) == 0 {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}
