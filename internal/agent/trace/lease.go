package trace

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Owner identifies this process as a lease holder: host, pid and a nonce.
func Owner(nonce string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), nonce)
}

// Acquire takes the lease on run id for owner until now+ttl. It succeeds
// when the run is unleased, the lease expired, owner already holds it, or
// the holder is a process on this host that no longer exists (a crashed
// run can be resumed at once). Otherwise it returns ErrLeased.
func (s *Store) Acquire(ctx context.Context, id, owner string, ttl time.Duration) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var cur string
		var exp int64
		err := tx.QueryRowContext(ctx, `SELECT lease_owner, lease_expiry FROM runs WHERE id = ?`, id).Scan(&cur, &exp)
		if err == sql.ErrNoRows {
			return fmt.Errorf("lease run %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read lease of %s: %w", id, err)
		}
		now := time.Now()
		if cur != owner && !leaseFree(cur, exp, now) {
			return fmt.Errorf("lease run %s (held by %s): %w", id, cur, ErrLeased)
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET lease_owner = ?, lease_expiry = ? WHERE id = ?`, owner, now.Add(ttl).UnixNano(), id)
		if err != nil {
			return fmt.Errorf("take lease of %s: %w", id, err)
		}
		return nil
	})
}

// Renew extends owner's lease; ErrLeased when owner lost it.
func (s *Store) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET lease_expiry = ? WHERE id = ? AND lease_owner = ?`, time.Now().Add(ttl).UnixNano(), id, owner)
	if err != nil {
		return fmt.Errorf("renew lease of %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("renew lease of %s: %w", id, ErrLeased)
	}
	return nil
}

// Release gives up owner's lease (a no-op when owner does not hold it).
func (s *Store) Release(ctx context.Context, id, owner string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET lease_owner = '', lease_expiry = 0 WHERE id = ? AND lease_owner = ?`, id, owner)
	if err != nil {
		return fmt.Errorf("release lease of %s: %w", id, err)
	}
	return nil
}

// leaseFree reports whether a lease held by owner until exp (Unix
// nanoseconds) may be taken at now: nobody holds it, it expired, or its
// holder is a process of this host that no longer exists. Acquire and
// Interrupted both decide with it, so a run shown as interrupted is one
// that resume can take.
func leaseFree(owner string, exp int64, now time.Time) bool {
	return owner == "" || now.UnixNano() >= exp || !holderAlive(owner)
}

// Outcomes as stored and as shown.
const (
	// OutcomeRunning is stored while a run is in flight.
	OutcomeRunning = "running"
	// OutcomeInterrupted is shown, never stored, for a run stored as
	// running that nothing drives any more: its process was killed, or it
	// stopped on a storage failure. Resume continues it from its last
	// committed step.
	OutcomeInterrupted = "interrupted"
	// OutcomeAwaitingApproval is stored for a run whose verified change
	// waits for approval, and shown for a live run whose change an editor
	// shows for review (RunRow.Reviewing).
	OutcomeAwaitingApproval = "awaiting_approval"
)

// Interrupted reports whether the run is stored as running but its tree's
// lease is free (see leaseFree): no live process drives it.
func (r *RunRow) Interrupted(now time.Time) bool {
	if r.Outcome != OutcomeRunning {
		return false
	}
	var exp int64
	if !r.LeaseExpiry.IsZero() {
		exp = r.LeaseExpiry.UnixNano()
	}
	return leaseFree(r.LeaseOwner, exp, now)
}

// Shown is the outcome to show for the run at now: OutcomeInterrupted for
// an interrupted run, OutcomeAwaitingApproval for a live run whose change
// an editor shows for review, else the stored outcome.
func (r *RunRow) Shown(now time.Time) string {
	if r.Interrupted(now) {
		return OutcomeInterrupted
	}
	if r.Outcome == OutcomeRunning && r.Reviewing {
		return OutcomeAwaitingApproval
	}
	return r.Outcome
}

// LeaseTTLEnv names the environment variable that overrides the lease
// duration (a Go duration, e.g. "2s"): how long a run whose process died
// on another host, or hangs, stays "running" before it shows as
// interrupted and can be resumed. For tests and shared state directories.
const LeaseTTLEnv = "IOH_LEASE_TTL"

// DefaultLeaseTTL is the lease duration when LeaseTTLEnv is unset.
const DefaultLeaseTTL = 30 * time.Second

// LeaseTTL reads LeaseTTLEnv through getenv: DefaultLeaseTTL when unset,
// an error for a value that is not a positive duration.
func LeaseTTL(getenv func(string) string) (time.Duration, error) {
	v := getenv(LeaseTTLEnv)
	if v == "" {
		return DefaultLeaseTTL, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 30s", LeaseTTLEnv, v)
	}
	return d, nil
}

// holderAlive reports whether a lease holder may still be running: false
// only when it is a process on this host that provably does not exist.
func holderAlive(owner string) bool {
	parts := strings.SplitN(owner, ":", 3)
	if len(parts) != 3 {
		return true
	}
	host, _ := os.Hostname()
	if parts[0] != host {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return true
	}
	if pid == os.Getpid() {
		return true
	}
	return processExists(pid)
}
