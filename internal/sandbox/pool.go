package sandbox

import (
	"strconv"
	"strings"
	"sync"
)

// Pool is what a long-lived caller (the server, an agent run, ACP) keeps
// between its runs so the next one starts sooner: on Linux, the stages
// started ahead of their run (warm_linux.go), the next run's cgroups
// (cgroup_spare_linux.go) and the landlock tier's next private directory
// (private_linux.go), and the background work of finished runs (their
// stages' reaping, their groups' and directories' removal). A Runner is
// given one with WithPool; a Runner without one takes the cold path:
// every run does its own setup in line and nothing of it outlives the
// run.
//
// Nothing a pool holds lets one run see another's view: a warm stage has
// done nothing but start before its run's config comes, and each spare is
// checked when a run takes it (docs/architecture.md, "the sandbox is set
// up in a re-executed child"). Close it when the caller is done. Safe for
// concurrent use.
type Pool struct {
	mu     sync.Mutex
	closed bool
	bg     pending // background work started through the pool
	os     poolOS  // what this platform's tiers keep ahead (pool_linux.go)
}

// NewPool returns an empty pool: it fills as runs go through it.
func NewPool() *Pool { return &Pool{} }

// Close kills the warm stages waiting, waits for the background work of
// the runs that went through the pool and removes what was made ahead for
// a next run. A run through a closed pool takes the cold path. Close may
// be called more than once.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.os.drain(&p.bg)
}

// active reports whether runs through p may keep things for the next
// run: p is a pool, not yet closed. A nil pool is the cold path.
func (p *Pool) active() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed
}

// background runs f in a goroutine Close waits for, unless p is nil or
// closed: then it returns false and the caller does the work in line.
func (p *Pool) background(f func()) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	p.bg.Add(1)
	p.mu.Unlock()
	go func() { // ends with f
		defer p.bg.Done()
		f()
	}()
	return true
}

// wait returns when the background work started so far is done (tests).
func (p *Pool) wait() {
	if p != nil {
		p.bg.Wait()
	}
}

// keyOf is the key of a pool's cache entry built from lists of paths:
// each list and each path length-prefixed, so two different inputs never
// share a key whatever bytes the paths hold.
func keyOf(lists ...[]string) string {
	var b strings.Builder
	for _, l := range lists {
		b.WriteString(strconv.Itoa(len(l)))
		b.WriteByte('[')
		for _, p := range l {
			b.WriteString(strconv.Itoa(len(p)))
			b.WriteByte(':')
			b.WriteString(p)
		}
		b.WriteByte(']')
	}
	return b.String()
}

// RunnerOption configures a Runner (NewRunner).
type RunnerOption func(*Runner)

// WithPool makes the Runner's runs go through p (nil: the cold path).
func WithPool(p *Pool) RunnerOption { return func(r *Runner) { r.pool = p } }

// pending counts work in flight; unlike a sync.WaitGroup, new work may
// start while someone waits.
type pending struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil while n is 0
}

func (p *pending) Add(d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 && d > 0 {
		p.zero = make(chan struct{})
	}
	p.n += d
	if p.n == 0 && p.zero != nil {
		close(p.zero)
		p.zero = nil
	}
}

func (p *pending) Done() { p.Add(-1) }

// Wait returns when nothing is in flight.
func (p *pending) Wait() {
	for {
		p.mu.Lock()
		z := p.zero
		p.mu.Unlock()
		if z == nil {
			return
		}
		<-z
	}
}
