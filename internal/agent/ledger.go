package agent

import (
	"fmt"
	"sync"
)

// Ledger is the tree-wide budget of one run tree: a node per agent, each
// with optional token and dollar limits, drawn under one lock shared by the
// whole tree. A draw reserves an upper bound before a model call is sent
// and is settled with the actual usage afterwards; a reservation succeeds
// only when it fits under the limit of the agent and of every ancestor, so
// the tree can never be overdrawn by calls whose usage stays within their
// reservation (the harness caps each call's output tokens to make it so).
type Ledger struct {
	mu     *sync.Mutex
	parent *Ledger
	// Limits; zero means unlimited.
	tokens int64
	cost   float64
	// Spent and reserved, this node and its descendants.
	spentTokens, resTokens int64
	spentCost, resCost     float64
	// unpriced counts calls whose cost nothing could price (their cost
	// is unknown, not 0), this node and its descendants.
	unpriced int
}

// NewLedger returns a root ledger with the given limits (0: unlimited).
func NewLedger(tokens int64, costUSD float64) *Ledger {
	return &Ledger{mu: new(sync.Mutex), tokens: tokens, cost: costUSD}
}

// Child opens a sub-ledger whose limits are at most what l has left now
// (a zero request takes half of it). The child's draws count against l.
func (l *Ledger) Child(tokens int64, costUSD float64) *Ledger {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &Ledger{mu: l.mu, parent: l}
	c.tokens = share(tokens, l.leftTokensLocked())
	c.cost = shareF(costUSD, l.leftCostLocked())
	return c
}

func share(want, left int64) int64 {
	if left < 0 { // unlimited
		return want
	}
	if want <= 0 || want > left {
		if want <= 0 {
			return max(left/2, 1)
		}
		return left
	}
	return want
}

func shareF(want, left float64) float64 {
	if left < 0 {
		return want
	}
	if want <= 0 {
		return max(left/2, 1e-9)
	}
	return min(want, left)
}

// leftTokensLocked is the smallest headroom on the path to the root, -1
// when unlimited everywhere.
func (l *Ledger) leftTokensLocked() int64 {
	left := int64(-1)
	for n := l; n != nil; n = n.parent {
		if n.tokens > 0 {
			h := max(n.tokens-n.spentTokens-n.resTokens, 0)
			if left < 0 || h < left {
				left = h
			}
		}
	}
	return left
}

func (l *Ledger) leftCostLocked() float64 {
	left := -1.0
	for n := l; n != nil; n = n.parent {
		if n.cost > 0 {
			h := max(n.cost-n.spentCost-n.resCost, 0)
			if left < 0 || h < left {
				left = h
			}
		}
	}
	return left
}

// Left returns the headroom in tokens and dollars (-1: unlimited).
func (l *Ledger) Left() (int64, float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leftTokensLocked(), l.leftCostLocked()
}

// Reservation is a draw awaiting settlement.
type Reservation struct {
	l      *Ledger
	tokens int64
	cost   float64
	done   bool
}

// errOverdraw is returned by Reserve when a draw does not fit.
type errOverdraw struct {
	what  string
	limit Limit
}

func (e errOverdraw) Error() string { return "budget: " + e.what + " would be exceeded" }

// Reserve atomically checks that tokens and cost fit under every limit on
// the path to the root and reserves them there.
func (l *Ledger) Reserve(tokens int64, cost float64) (*Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for n := l; n != nil; n = n.parent {
		if n.tokens > 0 && n.spentTokens+n.resTokens+tokens > n.tokens {
			return nil, errOverdraw{fmt.Sprintf("token budget (%d of %d used)", n.spentTokens+n.resTokens, n.tokens), LimitTokens}
		}
		if n.cost > 0 && n.spentCost+n.resCost+cost > n.cost+1e-12 {
			return nil, errOverdraw{fmt.Sprintf("cost budget ($%.4f of $%.4f used)", n.spentCost+n.resCost, n.cost), LimitCost}
		}
	}
	for n := l; n != nil; n = n.parent {
		n.resTokens += tokens
		n.resCost += cost
	}
	return &Reservation{l: l, tokens: tokens, cost: cost}, nil
}

// Settle replaces the reservation with the actual spend. Settling twice is
// a no-op.
func (r *Reservation) Settle(tokens int64, cost float64) {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	for n := r.l; n != nil; n = n.parent {
		n.resTokens -= r.tokens
		n.resCost -= r.cost
		n.spentTokens += tokens
		n.spentCost += cost
	}
}

// Charge records spend that happened without a reservation (restored from
// the trace on resume).
func (l *Ledger) Charge(tokens int64, cost float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for n := l; n != nil; n = n.parent {
		n.spentTokens += tokens
		n.spentCost += cost
	}
}

// Spent returns what this node and its descendants spent.
func (l *Ledger) Spent() (int64, float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spentTokens, l.spentCost
}

// Overdrawn reports whether any spend exceeds this node's limit.
func (l *Ledger) Overdrawn() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return (l.tokens > 0 && l.spentTokens > l.tokens) || (l.cost > 0 && l.spentCost > l.cost+1e-12)
}

// ChargeUnpriced records calls (n) whose cost is unknown, on this node and
// every ancestor.
func (l *Ledger) ChargeUnpriced(n int) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for x := l; x != nil; x = x.parent {
		x.unpriced += n
	}
}

// TreeSpent returns what the whole tree spent (the root ledger's tokens,
// cost and unpriced calls), whichever node it is asked of.
func (l *Ledger) TreeSpent() (tokens int64, cost float64, unpriced int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l
	for r.parent != nil {
		r = r.parent
	}
	return r.spentTokens, r.spentCost, r.unpriced
}
