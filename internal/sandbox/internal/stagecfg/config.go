// Package stagecfg holds what the sandbox's caller hands a re-executed
// stage on fd 3: the run's Config, in the binary frame the Linux tiers'
// first stage (PID 1, the landlock runner) reads (or as JSON, to the exec
// and floor stages), with the bounds a stage checks before it believes a
// frame. Package internal/sandbox fills the config from a Spec and applies
// it; this package decides nothing about a run.
package stagecfg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Config is what the caller hands a stage. It carries no secrets: Env is
// already allow-listed.
type Config struct {
	Argv       []string `json:"argv"`
	Dir        string   `json:"dir"`
	Env        []string `json:"env"`
	Writable   []string `json:"writable"`
	Masked     []string `json:"masked"`
	Network    bool     `json:"network"`
	StageLower string   `json:"stage_lower,omitempty"`
	StageUpper string   `json:"stage_upper,omitempty"`
	Limits     Limits   `json:"limits"`
	// Scratch directories get a private writable overlay (linux tier);
	// after setup, only those that were layered.
	Scratch []string `json:"scratch,omitempty"`
	// CgroupMemory/CgroupPids: the parent applied these caps, so the
	// matching rlimits are not needed.
	CgroupMemory bool `json:"cgroup_memory"`
	CgroupPids   bool `json:"cgroup_pids"`
	// CgroupTasks are the "tasks" files of the run's v1 groups: the
	// stage opens them at once and writes "0" to each from the thread
	// that forks the command (awaitGo).
	CgroupTasks []string `json:"cgroup_tasks,omitempty"`
	// HostUID is the caller's uid outside, for the report.
	HostUID int `json:"host_uid"`
	// Probe: set everything up, report, and exit without running Argv.
	Probe bool `json:"probe"`
	// Tier is the backend the stages serve: "" or "linux" for the
	// namespace tier, "landlock" for the tier without namespaces.
	Tier string `json:"tier,omitempty"`
	// ReadView lists what the landlock tier's command may read (files and
	// directories, secrets already carved out); see the sandbox's
	// readview.go.
	ReadView []string `json:"read_view,omitempty"`
	// ReadViewTypes has one byte per ReadView entry, 'd' for a directory
	// and 'f' for anything else, as the caller saw it (viewTypes), so the
	// landlock runner need not stat each entry; the kernel's check on the
	// rule's own descriptor still decides (tier_landlock_rules_linux.go).
	ReadViewTypes string `json:"read_view_types,omitempty"`
	// ViewLinks are symlinks among the read view's roots (path → target)
	// that the linux tier recreates in its private root.
	ViewLinks map[string]string `json:"view_links,omitempty"`
	// HostHome is the caller's HOME path, where the linux tier's PID 1
	// puts the command's HOME (a private directory) when it can
	// (placeHome); after setup, "" unless it did.
	HostHome string `json:"host_home,omitempty"`
	// Protected are more paths kept read-only inside the writable roots
	// (Spec.Protected; protectedIn).
	Protected []string `json:"protected,omitempty"`
	// NetProxyPort, with Network off, is the one TCP port on 127.0.0.1
	// the command reaches (Spec.NetProxy): in the landlock tier the
	// proxy's own, in the linux tier the forwarder's in the sandbox's
	// network namespace. 0: no proxy.
	NetProxyPort int `json:"net_proxy_port,omitempty"`
	// NetProxySocket is the host path of the proxy's unix socket, which
	// the linux tier's forwarder relays to (netforward_linux.go).
	NetProxySocket string `json:"net_proxy_socket,omitempty"`
}

// Limits are the run's caps as a stage applies them: the fields of
// sandbox.Limits, in its order, so either converts to the other.
type Limits struct {
	Wall   time.Duration // wall-clock time of the whole run
	CPU    time.Duration // CPU time per process
	Memory int64         // bytes
	Procs  int           // processes (and threads) at once
	Files  int           // open files per process
	Output int64         // bytes of stdout+stderr kept
}

// The Linux tiers' first stage takes its config in a binary frame, not
// JSON: encoding/json's first decode of a config with its read view (a
// few KB, ~170 paths) costs a fresh stage 60-120 us, this about 5. The
// frame is "ioh" and a version byte, the body's length (4 bytes, little
// endian), then the body: every field of Config in declaration order,
// each string as its length (uvarint) and bytes, each list and map as
// its length plus one (0 for nil), integers as varints, booleans as one
// byte. The caller and the stage are the same build (the stage program's
// hash is checked, package internal/initprog), so the format has no
// other version. TestRoundTrip fills every field.

// magic opens a config frame.
const magic = "ioh\x01"

// HeaderLen is the length of a frame's header, before its body.
const HeaderLen = 8

// maxBody bounds a frame's body: a command line and environment within
// the kernel's limits and a read view fit many times over.
const maxBody = 64 << 20

// Write writes cfg's frame to w in one write.
func Write(w io.Writer, cfg *Config) error {
	b := appendConfig(make([]byte, HeaderLen, HeaderLen+4096), cfg)
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(b)-HeaderLen))
	copy(b, magic)
	_, err := w.Write(b)
	return err
}

// BodyLen checks a frame's header and returns its body's length.
func BodyLen(h []byte) (int, error) {
	if len(h) < HeaderLen || string(h[:4]) != magic {
		return 0, fmt.Errorf("not a stage config frame (%q)", h[:min(len(h), 4)])
	}
	n := binary.LittleEndian.Uint32(h[4:8])
	if n > maxBody {
		return 0, fmt.Errorf("stage config of %d bytes (at most %d)", n, maxBody)
	}
	return int(n), nil
}

func appendConfig(b []byte, c *Config) []byte {
	b = appendStrs(b, c.Argv)
	b = appendStr(b, c.Dir)
	b = appendStrs(b, c.Env)
	b = appendStrs(b, c.Writable)
	b = appendStrs(b, c.Masked)
	b = appendBool(b, c.Network)
	b = appendStr(b, c.StageLower)
	b = appendStr(b, c.StageUpper)
	l := c.Limits
	for _, v := range []int64{int64(l.Wall), int64(l.CPU), l.Memory, int64(l.Procs), int64(l.Files), l.Output} {
		b = binary.AppendVarint(b, v)
	}
	b = appendStrs(b, c.Scratch)
	b = appendBool(b, c.CgroupMemory)
	b = appendBool(b, c.CgroupPids)
	b = appendStrs(b, c.CgroupTasks)
	b = binary.AppendVarint(b, int64(c.HostUID))
	b = appendBool(b, c.Probe)
	b = appendStr(b, c.Tier)
	b = appendStrs(b, c.ReadView)
	b = appendStr(b, c.ReadViewTypes)
	b = appendLinks(b, c.ViewLinks)
	b = appendStr(b, c.HostHome)
	b = appendStrs(b, c.Protected)
	b = binary.AppendVarint(b, int64(c.NetProxyPort))
	return appendStr(b, c.NetProxySocket)
}

func appendLinks(b []byte, links map[string]string) []byte {
	if links == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(links))+1)
	keys := make([]string, 0, len(links))
	for k := range links {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = appendStr(appendStr(b, k), links[k])
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendStrs(b []byte, ss []string) []byte {
	if ss == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(ss))+1)
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// Decode decodes a frame's body. The strings share one copy of body.
func Decode(body []byte) (Config, error) {
	r := reader{s: string(body)}
	var c Config
	c.Argv = r.strs()
	c.Dir = r.str()
	c.Env = r.strs()
	c.Writable = r.strs()
	c.Masked = r.strs()
	c.Network = r.flag()
	c.StageLower = r.str()
	c.StageUpper = r.str()
	c.Limits.Wall = time.Duration(r.varint())
	c.Limits.CPU = time.Duration(r.varint())
	c.Limits.Memory = r.varint()
	c.Limits.Procs = int(r.varint())
	c.Limits.Files = int(r.varint())
	c.Limits.Output = r.varint()
	c.Scratch = r.strs()
	c.CgroupMemory = r.flag()
	c.CgroupPids = r.flag()
	c.CgroupTasks = r.strs()
	c.HostUID = int(r.varint())
	c.Probe = r.flag()
	c.Tier = r.str()
	c.ReadView = r.strs()
	c.ReadViewTypes = r.str()
	if n, ok := r.count(); ok {
		c.ViewLinks = make(map[string]string, n)
		for range n {
			k := r.str()
			c.ViewLinks[k] = r.str()
		}
	}
	c.HostHome = r.str()
	c.Protected = r.strs()
	c.NetProxyPort = int(r.varint())
	c.NetProxySocket = r.str()
	if r.err == nil && r.s != "" {
		r.err = fmt.Errorf("%d bytes after the last field", len(r.s))
	}
	if r.err != nil {
		return Config{}, fmt.Errorf("stage config: %w", r.err)
	}
	return c, nil
}

// reader takes a config body apart; the first error sticks, and every
// read after it returns a zero value.
type reader struct {
	s   string
	err error
}

var errShort = errors.New("truncated")

func (r *reader) uvarint() uint64 {
	var v uint64
	for i := 0; r.err == nil; i++ {
		if i == len(r.s) || i == binary.MaxVarintLen64 {
			r.err = errShort
			break
		}
		c := r.s[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				r.err = errors.New("varint overflows 64 bits")
				break
			}
			r.s = r.s[i+1:]
			return v
		}
	}
	return 0
}

func (r *reader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// count reads a list's or map's length plus one; ok is false for nil (or
// after an error). A count past what the rest could hold (each element
// takes at least a byte) is an error, not an allocation.
func (r *reader) count() (int, bool) {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return 0, false
	}
	if n-1 > uint64(len(r.s)) {
		r.err = fmt.Errorf("%d elements in %d bytes", n-1, len(r.s))
		return 0, false
	}
	return int(n - 1), true
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.s)) {
		r.err = errShort
		return ""
	}
	v := r.s[:n]
	r.s = r.s[n:]
	return v
}

func (r *reader) strs() []string {
	n, ok := r.count()
	if !ok {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.str()
	}
	if r.err != nil {
		return nil
	}
	return ss
}

func (r *reader) flag() bool {
	if r.err != nil {
		return false
	}
	if r.s == "" {
		r.err = errShort
		return false
	}
	v := r.s[0]
	r.s = r.s[1:]
	if v > 1 {
		r.err = fmt.Errorf("boolean byte %d", v)
	}
	return v == 1
}
