package trace

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order, forward only; the database's
// user_version is the number already applied. Never change what a
// published migration creates: append a new one. Each is idempotent (IF
// NOT EXISTS), so a database whose version lags its tables (written by an
// older build that raced) still migrates.
var migrations = []string{
	// 1: runs, steps, events.
	`CREATE TABLE IF NOT EXISTS runs (
		id            TEXT PRIMARY KEY,
		parent        TEXT NOT NULL DEFAULT '',
		root          TEXT NOT NULL DEFAULT '',
		goal          TEXT NOT NULL,
		contract      TEXT NOT NULL,
		outcome       TEXT NOT NULL,
		summary       TEXT NOT NULL DEFAULT '',
		error         TEXT NOT NULL DEFAULT '',
		first_started INTEGER NOT NULL,
		updated       INTEGER NOT NULL,
		steps         INTEGER NOT NULL DEFAULT 0,
		input_tokens  INTEGER NOT NULL DEFAULT 0,
		output_tokens INTEGER NOT NULL DEFAULT 0,
		cache_read    INTEGER NOT NULL DEFAULT 0,
		cache_write   INTEGER NOT NULL DEFAULT 0,
		cost_usd      REAL NOT NULL DEFAULT 0,
		state         TEXT NOT NULL DEFAULT '{}',
		changes       BLOB,
		lease_owner   TEXT NOT NULL DEFAULT '',
		lease_expiry  INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX IF NOT EXISTS runs_parent ON runs(parent);
	CREATE TABLE IF NOT EXISTS steps (
		run        TEXT NOT NULL REFERENCES runs(id),
		n          INTEGER NOT NULL,
		time       INTEGER NOT NULL,
		messages   TEXT NOT NULL,
		usage      TEXT NOT NULL,
		cost_usd   REAL NOT NULL,
		changes    BLOB,
		PRIMARY KEY (run, n)
	);
	CREATE TABLE IF NOT EXISTS events (
		seq    INTEGER PRIMARY KEY AUTOINCREMENT,
		run    TEXT NOT NULL,
		step   INTEGER NOT NULL,
		type   TEXT NOT NULL,
		time   INTEGER NOT NULL,
		body   TEXT NOT NULL
	);
	CREATE INDEX IF NOT EXISTS events_run ON events(run, seq);`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// migrate applies the migrations the database lacks. Processes opening a
// fresh database at once are kept apart by one write transaction (BEGIN
// IMMEDIATE, waiting out busy_timeout) that re-reads the version inside
// it: the first applies every migration and bumps the version, the others
// then find nothing to do. A database newer than this build is refused
// rather than guessed at.
func migrate(ctx context.Context, db *sql.DB) error {
	v, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	if v >= len(migrations) {
		return checkVersion(v)
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()
	if v, err = schemaVersion(ctx, tx); err != nil {
		return err
	}
	if v >= len(migrations) {
		return checkVersion(v)
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("apply migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations))); err != nil {
		return fmt.Errorf("bump schema version to %d: %w", len(migrations), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migrations %d to %d: %w", v+1, len(migrations), err)
	}
	return nil
}

func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

func checkVersion(v int) error {
	if v > len(migrations) {
		return fmt.Errorf("%w: database has schema %d, this build knows %d", ErrNewerSchema, v, len(migrations))
	}
	return nil
}
