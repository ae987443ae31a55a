package trace

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order, forward only; the database's
// user_version is the number already applied. Never edit a published
// migration: append a new one.
var migrations = []string{
	// 1: runs, steps, events.
	`CREATE TABLE runs (
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
	CREATE INDEX runs_parent ON runs(parent);
	CREATE TABLE steps (
		run        TEXT NOT NULL REFERENCES runs(id),
		n          INTEGER NOT NULL,
		time       INTEGER NOT NULL,
		messages   TEXT NOT NULL,
		usage      TEXT NOT NULL,
		cost_usd   REAL NOT NULL,
		changes    BLOB,
		PRIMARY KEY (run, n)
	);
	CREATE TABLE events (
		seq    INTEGER PRIMARY KEY AUTOINCREMENT,
		run    TEXT NOT NULL,
		step   INTEGER NOT NULL,
		type   TEXT NOT NULL,
		time   INTEGER NOT NULL,
		body   TEXT NOT NULL
	);
	CREATE INDEX events_run ON events(run, seq);`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// migrate applies the migrations the database lacks, each in its own
// transaction with the version bump. A database newer than this build is
// refused rather than guessed at.
func migrate(ctx context.Context, db *sql.DB) error {
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: database has schema %d, this build knows %d", ErrNewerSchema, v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("apply migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("bump schema version to %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit migration %d: %w", i+1, err)
		}
	}
	return nil
}
