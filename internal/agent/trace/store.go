// Package trace is the durable record of runs: one SQLite database per
// workspace under the state directory (docs/trace.md), each step committed in one
// transaction, leases so two processes never drive one run, recovery of a
// damaged file, and the queries that read runs and their events back. The
// events themselves are package event's; the store redacts every text it
// writes (package redact).
package trace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/ioh-lsp/ioh-lsp/internal/agent/event"
	"github.com/ioh-lsp/ioh-lsp/internal/agent/redact"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// Store is the trace database of one workspace. It is safe for concurrent
// use by the goroutines of one process; leases keep processes apart.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so each
// step's commit is fsynced to the WAL before CommitStep returns. NORMAL
// would survive a process crash (kill -9) but may lose the last commits on
// power loss; a step that the trace claims committed must exist afterwards,
// and the measured cost of FULL is small (see bench/harness.sh).
type Store struct {
	db     *sql.DB
	path   string
	redact redact.Redactor
	// recovery is set when Open found the database corrupt and moved it
	// aside (nil otherwise).
	recovery *Recovery
	// stmts are the hot-path statements, prepared once per store instead of
	// parsing SQL on every step commit. database/sql prepares each once per
	// pooled connection and reuses it inside a Tx (Tx.StmtContext).
	stmts storeStmts
}

// storeStmts are the statements every step commit runs.
type storeStmts struct {
	insertStep, updateRun, updateRunChanges, insertEvent *sql.Stmt
}

const (
	sqlInsertStep = `INSERT INTO steps (run, n, time, messages, usage, cost_usd, changes) VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlUpdateRun  = `UPDATE runs SET steps = ?, input_tokens = ?, output_tokens = ?, cache_read = ?, cache_write = ?, cost_usd = ?, state = ?, updated = ? WHERE id = ?`
	// sqlUpdateRunChanges also replaces the change set (a step that changed it).
	sqlUpdateRunChanges = `UPDATE runs SET steps = ?, input_tokens = ?, output_tokens = ?, cache_read = ?, cache_write = ?, cost_usd = ?, state = ?, updated = ?, changes = ? WHERE id = ?`
	sqlInsertEvent      = `INSERT INTO events (run, step, type, time, body) VALUES (?, ?, ?, ?, ?)`
)

// prepare prepares the hot-path statements.
func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.stmts.insertStep, sqlInsertStep},
		{&s.stmts.updateRun, sqlUpdateRun},
		{&s.stmts.updateRunChanges, sqlUpdateRunChanges},
		{&s.stmts.insertEvent, sqlInsertEvent},
	} {
		st, err := s.db.PrepareContext(ctx, p.sql)
		if err != nil {
			s.closeStmts()
			return fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.dst = st
	}
	return nil
}

func (s *Store) closeStmts() {
	for _, st := range []*sql.Stmt{s.stmts.insertStep, s.stmts.updateRun, s.stmts.updateRunChanges, s.stmts.insertEvent} {
		if st != nil {
			st.Close()
		}
	}
}

// Open opens (creating it and its directory if needed) the database at
// path and migrates it. secrets are values never to be written: every text
// and blob the store writes is redacted with them.
func Open(ctx context.Context, path string, secrets []string) (*Store, error) {
	return OpenWith(ctx, path, Options{Secrets: secrets})
}

// Options tune OpenWith.
type Options struct {
	// Secrets are values never to be written.
	Secrets []string
	// Synchronous is SQLite's synchronous level: "FULL" (the default; every
	// commit is durable) or "NORMAL" (survives a process crash, may lose
	// the last commits on power loss; for measurements and tests).
	Synchronous string
	// BusyTimeout is how long a statement waits for another process's
	// lock before failing with SQLITE_BUSY (default 10s).
	BusyTimeout time.Duration
}

// OpenWith is Open with options.
//
// Files: the state directory is created 0700 (with any parent it needs)
// and the database and its -wal and -shm files are 0600 whatever the
// umask, since the trace holds the conversation and code; an existing
// database with wider modes is narrowed.
//
// A corrupt database (SQLITE_CORRUPT, SQLITE_NOTADB, or a quick_check that
// finds damage) is moved aside with a timestamp and a fresh store is
// started; Recovered says so. Busy, full, read-only or unreadable files are
// never taken for corruption: they fail the open with a StorageError.
func OpenWith(ctx context.Context, path string, o Options) (*Store, error) {
	sync := "FULL"
	switch o.Synchronous {
	case "", "FULL":
	case "NORMAL":
		sync = "NORMAL"
	default:
		return nil, fmt.Errorf("open trace database: synchronous level %q (want FULL or NORMAL)", o.Synchronous)
	}
	dir := filepath.Dir(path)
	if err := makePrivateDir(dir); err != nil {
		return nil, &StorageError{Dir: dir, Err: fmt.Errorf("create state directory: %w", err)}
	}
	db, err := openChecked(ctx, path, sync, o.BusyTimeout)
	var rec *Recovery
	if errors.Is(err, ErrCorrupt) {
		if rec, err = moveAsideCorrupt(ctx, path, err, o.BusyTimeout); err == nil {
			db, err = openChecked(ctx, path, sync, o.BusyTimeout)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open trace database %s: %w", path, err)
	}
	s := &Store{db: db, path: path, redact: redact.New(o.Secrets), recovery: rec}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open trace database %s: %w", path, storageErr(dir, err))
	}
	return s, nil
}

// AddSecrets makes the store redact more values from now on (credentials
// of the URLs a contract configures, found when its run starts).
func (s *Store) AddSecrets(secrets ...string) { s.redact.Add(secrets...) }

// openChecked opens the database at path, checks it (ErrCorrupt when it
// is damaged) and migrates it.
func openChecked(ctx context.Context, path, sync string, busy time.Duration) (*sql.DB, error) {
	dir := filepath.Dir(path)
	if err := privateFiles(path); err != nil {
		return nil, &StorageError{Dir: dir, Err: err}
	}
	if busy <= 0 {
		busy = 10 * time.Second
	}
	q := url.Values{}
	// busy_timeout first: the journal_mode change of a fresh database
	// takes a lock that other processes opening it at once must wait for.
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, storageErr(dir, err)
	}
	// SQLite answers SQLITE_BUSY without waiting in a few cases (another
	// process switching a fresh database to WAL, or recovering its WAL),
	// so a busy check or migration is tried again until busy has passed.
	deadline := time.Now().Add(busy)
	for {
		err := checkHealth(ctx, db)
		if err == nil {
			if err = migrate(ctx, db); classify(err) == classCorrupt {
				err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
		}
		switch {
		case err == nil:
			return db, nil
		case errors.Is(err, ErrCorrupt):
			db.Close()
			return nil, err
		case isBusy(err) && time.Now().Before(deadline) && ctx.Err() == nil:
			time.Sleep(20 * time.Millisecond)
			continue
		}
		db.Close()
		return nil, storageErr(dir, err)
	}
}

// checkHealth runs SQLite's quick_check: ErrCorrupt when the file is not a
// database or is damaged, a StorageError when it cannot be read.
func checkHealth(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return checkErr(db, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return checkErr(db, err)
		}
		if line != "ok" && len(problems) < 3 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return checkErr(db, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: quick_check: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

func checkErr(db *sql.DB, err error) error {
	if classify(err) == classCorrupt {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return fmt.Errorf("check database: %w", err)
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Recovered reports the corrupt database Open moved aside, nil when the
// store opened as it was.
func (s *Store) Recovered() *Recovery { return s.recovery }

// Close closes the database.
func (s *Store) Close() error {
	s.closeStmts()
	return s.db.Close()
}

// Totals are a run's accumulated spend.
type Totals struct {
	Steps            int     `json:"steps"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Tokens is what the token budget counts: uncached input, cache writes
// and output; CacheReadTokens are reported beside it (model.Usage.Total).
func (t Totals) Tokens() int64 {
	return t.InputTokens + t.OutputTokens + t.CacheWriteTokens
}

// RunRow is one run as stored.
type RunRow struct {
	ID           string
	Parent       string // "" for a root run
	Root         string // the tree's root run id (itself for a root)
	Goal         string
	Contract     json.RawMessage
	Outcome      string
	Summary      string
	Error        string
	FirstStarted time.Time
	Updated      time.Time
	Totals       Totals
	// State is the harness's opaque resume state as of the last step.
	State json.RawMessage
	// Changes is the change set as of the last step (workspace.Marshal).
	Changes []byte
	// LeaseOwner and LeaseExpiry are the lease of the run's tree (the root
	// run's lease, for a sub-agent too). CreateRun takes them as the new
	// run's lease, so a run is never seen unleased while it starts.
	LeaseOwner  string
	LeaseExpiry time.Time
	// Reviewing is true while an editor shows the run's change for review
	// (a review_opened event not yet followed by the proposal's answer):
	// read from the events, never written by CreateRun.
	Reviewing bool
}

// CreateRun inserts a new run with its run_started event.
func (s *Store) CreateRun(ctx context.Context, r *RunRow, events ...event.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		state := r.State
		if len(state) == 0 {
			state = json.RawMessage("{}")
		}
		var exp int64
		if r.LeaseOwner != "" {
			exp = r.LeaseExpiry.UnixNano()
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, parent, root, goal, contract, outcome, first_started, updated, state, lease_owner, lease_expiry)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Parent, r.Root, s.redact.String(r.Goal), s.redact.String(string(r.Contract)), r.Outcome,
			r.FirstStarted.UnixNano(), time.Now().UnixNano(), s.redact.String(string(state)), r.LeaseOwner, exp)
		if err != nil {
			return fmt.Errorf("insert run %s: %w", r.ID, err)
		}
		return s.insertEvents(ctx, tx, events)
	})
}

// Step is one committed step: the transcript delta, usage and cost drawn,
// the change set after it, the harness's resume state, and its events
// (tool calls and results, verdicts, budget draws).
type Step struct {
	Run      string
	N        int
	Time     time.Time
	Messages json.RawMessage // JSON array of model.Message appended by this step
	Usage    json.RawMessage // model.Usage drawn by this step
	CostUSD  float64
	Changes  []byte // change set after the step; nil when unchanged
	State    json.RawMessage
	// Totals are the run's totals after this step.
	Totals Totals
	Events []event.Event
}

// CommitStep writes a step, the run's new totals, state and change set, and
// the step's events in one transaction: after a crash a step is either all
// there or absent. Step numbers are unique per run.
func (s *Store) CommitStep(ctx context.Context, st *Step) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var changes any
		if st.Changes != nil {
			changes = s.redact.Bytes(st.Changes)
		}
		_, err := tx.StmtContext(ctx, s.stmts.insertStep).ExecContext(ctx,
			st.Run, st.N, st.Time.UnixNano(), s.redact.String(string(st.Messages)), string(st.Usage), st.CostUSD, changes)
		if err != nil {
			var n int
			if s.db.QueryRowContext(ctx, `SELECT count(*) FROM steps WHERE run = ? AND n = ?`, st.Run, st.N).Scan(&n) == nil && n > 0 {
				return fmt.Errorf("commit step %d of %s: %w", st.N, st.Run, ErrStepExists)
			}
			return fmt.Errorf("insert step %d of %s: %w", st.N, st.Run, err)
		}
		t := st.Totals
		stmt := s.stmts.updateRun
		args := []any{t.Steps, t.InputTokens, t.OutputTokens, t.CacheReadTokens, t.CacheWriteTokens, t.CostUSD, s.redact.String(string(st.State)), time.Now().UnixNano()}
		if st.Changes != nil {
			stmt = s.stmts.updateRunChanges
			args = append(args, changes)
		}
		args = append(args, st.Run)
		if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("update run %s: %w", st.Run, err)
		}
		return s.insertEvents(ctx, tx, st.Events)
	})
}

// SetOutcome records a run's outcome (and summary and error) with its
// events in one transaction. state, when not nil, replaces the resume state.
func (s *Store) SetOutcome(ctx context.Context, id, outcome, summary, errText string, state json.RawMessage, events ...event.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		q := `UPDATE runs SET outcome = ?, summary = ?, error = ?, updated = ?`
		args := []any{outcome, s.redact.String(summary), s.redact.String(errText), time.Now().UnixNano()}
		if state != nil {
			q += `, state = ?`
			args = append(args, s.redact.String(string(state)))
		}
		q += ` WHERE id = ?`
		args = append(args, id)
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("set outcome of %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("set outcome of %s: %w", id, ErrNotFound)
		}
		return s.insertEvents(ctx, tx, events)
	})
}

// AppendEvents stores events outside a step (verification, approvals).
func (s *Store) AppendEvents(ctx context.Context, events ...event.Event) error {
	if len(events) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error { return s.insertEvents(ctx, tx, events) })
}

func (s *Store) insertEvents(ctx context.Context, tx *sql.Tx, events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	stmt := tx.StmtContext(ctx, s.stmts.insertEvent)
	defer stmt.Close()
	for _, e := range events {
		body, err := e.MarshalJSON() // compact already: skip json.Marshal's re-validation pass
		if err != nil {
			return fmt.Errorf("encode %s event: %w", e.Type, err)
		}
		t := e.Time
		if t.IsZero() {
			t = time.Now()
		}
		if _, err := stmt.ExecContext(ctx, e.Run, e.Step, e.Type, t.UnixNano(), s.redact.String(string(body))); err != nil {
			return fmt.Errorf("insert %s event: %w", e.Type, err)
		}
	}
	return nil
}

// tx runs f in one write transaction. A failure of the storage (full,
// I/O, busy, corrupt) comes back as a StorageError naming the state
// directory; nothing of f is then committed.
func (s *Store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	dir := filepath.Dir(s.path)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return storageErr(dir, fmt.Errorf("begin transaction: %w", err))
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return storageErr(dir, err)
	}
	if err := tx.Commit(); err != nil {
		return storageErr(dir, fmt.Errorf("commit transaction: %w", err))
	}
	return nil
}

// ErrIsNotFound reports whether err means the run does not exist.
func ErrIsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
