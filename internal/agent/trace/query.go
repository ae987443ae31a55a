package trace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
)

// runCols are read from runFrom: the run r and its tree's root l, whose
// lease is the tree's.
const runCols = `r.id, r.parent, r.root, r.goal, r.contract, r.outcome, r.summary, r.error, r.first_started, r.updated,
	r.steps, r.input_tokens, r.output_tokens, r.cache_read, r.cache_write, r.cost_usd, r.state, r.changes,
	COALESCE(l.lease_owner, r.lease_owner), COALESCE(l.lease_expiry, r.lease_expiry), ` + reviewingCol

// reviewingCol is 1 while the run's change is with an editor for review:
// a review_opened event with no proposal or outcome event stored after it
// (the agent stores its proposal event once the review is answered).
const reviewingCol = `EXISTS (SELECT 1 FROM events o WHERE o.run = r.id AND o.type = '` + event.TypeReviewOpened + `'
	AND o.seq > COALESCE((SELECT MAX(x.seq) FROM events x WHERE x.run = r.id AND x.type IN ('` + event.TypeProposal + `', '` + event.TypeOutcome + `')), 0))`

const runFrom = ` FROM runs r LEFT JOIN runs l ON l.id = r.root `

func scanRun(sc interface{ Scan(...any) error }) (*RunRow, error) {
	var r RunRow
	var contract, state string
	var first, updated, exp int64
	err := sc.Scan(&r.ID, &r.Parent, &r.Root, &r.Goal, &contract, &r.Outcome, &r.Summary, &r.Error, &first, &updated,
		&r.Totals.Steps, &r.Totals.InputTokens, &r.Totals.OutputTokens, &r.Totals.CacheReadTokens, &r.Totals.CacheWriteTokens,
		&r.Totals.CostUSD, &state, &r.Changes, &r.LeaseOwner, &exp, &r.Reviewing)
	if err != nil {
		return nil, err
	}
	r.Contract = json.RawMessage(contract)
	r.State = json.RawMessage(state)
	r.FirstStarted = time.Unix(0, first)
	r.Updated = time.Unix(0, updated)
	if exp != 0 {
		r.LeaseExpiry = time.Unix(0, exp)
	}
	return &r, nil
}

// Run returns one run.
func (s *Store) Run(ctx context.Context, id string) (*RunRow, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runCols+runFrom+`WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", id, err)
	}
	return r, nil
}

// Runs lists every run, oldest first.
func (s *Store) Runs(ctx context.Context) ([]*RunRow, error) {
	return s.queryRuns(ctx, `SELECT `+runCols+runFrom+`ORDER BY r.first_started, r.id`)
}

// Tree lists the runs of the tree rooted at root (root included).
func (s *Store) Tree(ctx context.Context, root string) ([]*RunRow, error) {
	return s.queryRuns(ctx, `SELECT `+runCols+runFrom+`WHERE r.root = ? ORDER BY r.first_started, r.id`, root)
}

func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]*RunRow, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []*RunRow
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("read run row: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Steps returns a run's committed steps in order (Events not filled).
func (s *Store) Steps(ctx context.Context, id string) ([]*Step, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT n, time, messages, usage, cost_usd, changes FROM steps WHERE run = ? ORDER BY n`, id)
	if err != nil {
		return nil, fmt.Errorf("list steps of %s: %w", id, err)
	}
	defer rows.Close()
	var out []*Step
	for rows.Next() {
		st := &Step{Run: id}
		var t int64
		var msgs, usage string
		if err := rows.Scan(&st.N, &t, &msgs, &usage, &st.CostUSD, &st.Changes); err != nil {
			return nil, fmt.Errorf("read step of %s: %w", id, err)
		}
		st.Time = time.Unix(0, t)
		st.Messages = json.RawMessage(msgs)
		st.Usage = json.RawMessage(usage)
		out = append(out, st)
	}
	return out, rows.Err()
}

// Events returns a run's events in the order they were stored.
func (s *Store) Events(ctx context.Context, id string) ([]event.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM events WHERE run = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", id, err)
	}
	defer rows.Close()
	var out []event.Event
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("read event of %s: %w", id, err)
		}
		var e event.Event
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			return nil, fmt.Errorf("decode event of %s: %w", id, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// TreeEvents returns the events of run root and every sub-agent of its
// tree, in the order they were stored.
func (s *Store) TreeEvents(ctx context.Context, root string) ([]event.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM events WHERE run IN (SELECT id FROM runs WHERE root = ? OR id = ?) ORDER BY seq`, root, root)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", root, err)
	}
	defer rows.Close()
	var out []event.Event
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("read event of %s: %w", root, err)
		}
		var e event.Event
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			return nil, fmt.Errorf("decode event of %s: %w", root, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
