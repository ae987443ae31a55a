package trace

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// SetChanges replaces the change set stored with run id (the snapshot
// taken before its change was applied, with every base's content, which
// undo reverts from).
func (s *Store) SetChanges(ctx context.Context, id string, changes []byte) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET changes = ?, updated = ? WHERE id = ?`, s.redact.Bytes(changes), time.Now().UnixNano(), id)
		if err != nil {
			return fmt.Errorf("store the change set of %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("store the change set of %s: %w", id, ErrNotFound)
		}
		return nil
	})
}
