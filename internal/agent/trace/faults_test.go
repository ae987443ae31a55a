package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperOpenEnv makes the test binary, run for
// TestSimultaneousFirstOpenByProcesses, a process that opens the store at
// the path it names once its stdin closes, records one run and exits 0.
const helperOpenEnv = "IOH_TRACE_TEST_OPEN"

func openHelper(path string) {
	io.Copy(io.Discard, os.Stdin) // the start barrier
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	id := fmt.Sprintf("r-%d", os.Getpid())
	err = s.CreateRun(ctx, &RunRow{ID: id, Root: id, Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "verified", FirstStarted: time.Now()})
	s.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Processes opening a fresh store at the same moment all succeed: the
// migration runs once, inside one write transaction that re-reads the
// schema version. (Before, three of four failed with "table runs already
// exists".)
func TestSimultaneousFirstOpenByProcesses(t *testing.T) {
	if path := os.Getenv(helperOpenEnv); path != "" {
		openHelper(path)
	}
	const n = 8
	for round := 0; round < 3; round++ {
		dir := t.TempDir()
		path := filepath.Join(dir, "state", "w.db")
		type child struct {
			cmd    *exec.Cmd
			stdin  io.WriteCloser
			stderr bytes.Buffer
		}
		kids := make([]*child, n)
		for i := range kids {
			c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestSimultaneousFirstOpenByProcesses$")}
			c.cmd.Env = append(os.Environ(), helperOpenEnv+"="+path, "HOME="+dir, "XDG_STATE_HOME="+dir, "IOH_STATE_DIR="+dir)
			c.cmd.Stderr = &c.stderr
			var err error
			if c.stdin, err = c.cmd.StdinPipe(); err != nil {
				t.Fatal(err)
			}
			if err := c.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			kids[i] = c
		}
		for _, c := range kids { // release them together
			c.stdin.Close()
		}
		for i, c := range kids {
			done := make(chan error, 1)
			go func() { done <- c.cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("round %d: process %d of %d failed: %v: %s", round, i+1, n, err, strings.TrimSpace(c.stderr.String()))
				}
			case <-time.After(2 * time.Minute):
				c.cmd.Process.Kill()
				t.Fatalf("round %d: process %d hangs", round, i+1)
			}
		}
		if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
			t.Errorf("round %d: a store being created was taken for corrupt: %v", round, m)
		}
		s, err := Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.Runs(context.Background())
		s.Close()
		if err != nil || len(rows) != n {
			t.Fatalf("round %d: %d runs recorded (%v), want %d", round, len(rows), err, n)
		}
	}
}

// A database whose version lags its tables (an older build raced, or a
// migration was applied but the bump was lost) migrates again cleanly.
func TestMigrationIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "verified", FirstStarted: time.Now()})
	if _, err := s.db.Exec(`PRAGMA user_version = 0`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("reopen with the version reset: %v", err)
	}
	defer s2.Close()
	if _, err := s2.Run(ctx, "r"); err != nil {
		t.Errorf("the run did not survive the re-migration: %v", err)
	}
}

// seedStore makes a store with a few runs big enough to span many pages,
// closed (checkpointed, so the data is in the main file).
func seedStore(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	s, path := openTemp(t)
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("r-%d", i)
		if err := s.CreateRun(ctx, &RunRow{ID: id, Root: id, Goal: strings.Repeat("g", 2000), Contract: json.RawMessage(`{}`), Outcome: "verified", FirstStarted: time.Now()}); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 5; n++ {
			st := &Step{Run: id, N: n, Time: time.Now(), Messages: json.RawMessage(`["` + strings.Repeat("m", 3000) + `"]`), Usage: json.RawMessage(`{}`),
				State: json.RawMessage(`{}`), Totals: Totals{Steps: n}}
			if err := s.CommitStep(ctx, st); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatalf("the WAL outlived the last connection")
	}
	return path
}

// A truncated or scribbled database is detected on open, moved aside with
// its sidecars under a timestamped name, and a fresh store starts; the
// Recovery names the old file. (Before, every command failed with
// "database disk image is malformed".)
func TestCorruptDatabaseMovedAside(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"truncated", func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			if err := os.Truncate(path, fi.Size()/3); err != nil {
				t.Fatal(err)
			}
		}},
		{"header scribbled", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt(bytes.Repeat([]byte{0xA5}, 100), 0)
			f.Close()
		}},
		{"pages scribbled", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := f.Stat()
			for off := int64(4096); off < fi.Size(); off += 3 * 4096 { // every third page after the first
				f.WriteAt(bytes.Repeat([]byte("scribble"), 512), off)
			}
			f.Close()
		}},
		{"not a database at all", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("these are my notes, not a database\n"), 0o600)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := seedStore(t)
			tt.damage(t, path)
			damaged, _ := os.ReadFile(path)
			os.WriteFile(path+"-shm", []byte("stale shm"), 0o600) // a sidecar moves with it
			s, err := Open(ctx, path, nil)
			if err != nil {
				t.Fatalf("open a corrupt database: %v, want a fresh store", err)
			}
			defer s.Close()
			rec := s.Recovered()
			if rec == nil {
				t.Fatal("no recovery reported")
			}
			moved, err := os.ReadFile(rec.MovedTo)
			if err != nil || !bytes.Equal(moved, damaged) {
				t.Errorf("the corrupt file is not kept at %s (%v)", rec.MovedTo, err)
			}
			// The stale -shm moved with it, unless SQLite's own close of the
			// checked file removed it; it is never left with the fresh store.
			if b, err := os.ReadFile(path + "-shm"); err == nil && string(b) == "stale shm" {
				t.Errorf("the corrupt database's -shm was left next to the fresh store")
			}
			for _, m := range rec.Moved {
				if strings.HasSuffix(m, "-shm") {
					if b, _ := os.ReadFile(m); string(b) != "stale shm" {
						t.Errorf("moved -shm holds %q", b)
					}
				}
			}
			msg := rec.String()
			for _, want := range []string{path, rec.MovedTo, "corrupt", "fresh"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
			if !strings.HasPrefix(filepath.Base(rec.MovedTo), filepath.Base(path)+".corrupt-") {
				t.Errorf("moved to %s, want a timestamped name next to the database", rec.MovedTo)
			}
			rows, err := s.Runs(ctx)
			if err != nil || len(rows) != 0 {
				t.Errorf("fresh store: %d runs, %v", len(rows), err)
			}
			if err := s.CreateRun(ctx, &RunRow{ID: "new", Root: "new", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()}); err != nil {
				t.Errorf("write to the fresh store: %v", err)
			}
			// The next open finds a healthy store and moves nothing.
			s.Close()
			s2, err := Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if s2.Recovered() != nil {
				t.Errorf("a healthy store was moved aside: %v", s2.Recovered())
			}
		})
	}
}

// A healthy store is never lost to a transient error: a store whose write
// lock another process holds fails to open with a storage error (busy),
// and the file stays where it is, untouched.
func TestBusyStoreIsNotCorrupt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	// A fresh file, so Open must take the write lock to migrate it.
	blocker, err := OpenWith(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	if _, err := blocker.db.Exec(`PRAGMA user_version = 0`); err != nil {
		t.Fatal(err)
	}
	conn, err := blocker.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `ROLLBACK`)
	_, err = OpenWith(ctx, path, Options{BusyTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrStorage) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("open while another holds the lock: %v, want a storage (busy) error, not corruption", err)
	}
	if !strings.Contains(err.Error(), filepath.Dir(path)) {
		t.Errorf("error %q does not name the state directory", err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
		t.Errorf("a busy store was moved aside: %v", m)
	}
	// The control: once the lock is gone the same open succeeds.
	conn.ExecContext(ctx, `ROLLBACK`)
	s, err := OpenWith(ctx, path, Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("open after the lock is released: %v", err)
	}
	s.Close()
}

// A database path that cannot be opened (here a directory stands where
// the file should be) is a storage error naming the state directory, and
// nothing is moved or removed.
func TestUnopenableStoreIsNotCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(path, "keep"), []byte("x"), 0o600)
	_, err := Open(context.Background(), path, nil)
	if !errors.Is(err, ErrStorage) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("open: %v, want a storage error naming %s", err, dir)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
		t.Errorf("moved aside: %v", m)
	}
	if _, err := os.Stat(filepath.Join(path, "keep")); err != nil {
		t.Errorf("the path's content was touched: %v", err)
	}
}

// Only SQLITE_CORRUPT and SQLITE_NOTADB classify as corruption.
func TestStorageErrorsAreClassified(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()})
	// A logic error (a duplicate id) is not a storage failure.
	err := s.CreateRun(ctx, &RunRow{ID: "r", Root: "r", Goal: "g", Contract: json.RawMessage(`{}`), Outcome: "running", FirstStarted: time.Now()})
	if err == nil || errors.Is(err, ErrStorage) {
		t.Errorf("duplicate run: %v, want a plain error", err)
	}
	// A write refused by SQLite for a full database is one, naming the
	// directory: cap the file at its current page count.
	var pages int
	s.db.QueryRow(`PRAGMA page_count`).Scan(&pages)
	for i := 0; i < 4; i++ { // every pooled connection
		s.db.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages))
	}
	conn, _ := s.db.Conn(ctx)
	defer conn.Close()
	conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages))
	_, err = conn.ExecContext(ctx, `INSERT INTO events (run, step, type, time, body) VALUES ('r', 0, 'x', 0, ?)`, strings.Repeat("x", 1<<20))
	if classify(err) != classStorage {
		t.Fatalf("a full database: %v classified %d, want storage", err, classify(err))
	}
	if se := storageErr(filepath.Dir(path), err); !errors.Is(se, ErrStorage) || !strings.Contains(se.Error(), filepath.Dir(path)) {
		t.Errorf("storage error %v does not name the state directory", se)
	}
}

// A run stored as running shows as interrupted exactly when its tree's
// lease may be taken (the test Acquire uses): unheld, expired, or held by
// a process of this host that is gone. Its sub-agents follow the root.
func TestInterruptedFollowsTheLease(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	now := time.Now()
	me := Owner("a")
	host, _ := os.Hostname()
	create := func(id, parent, root, outcome string) {
		t.Helper()
		r := &RunRow{ID: id, Parent: parent, Root: root, Goal: "g", Contract: json.RawMessage(`{}`), Outcome: outcome, FirstStarted: now}
		if parent == "" {
			r.LeaseOwner, r.LeaseExpiry = me, now.Add(time.Minute)
		}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	create("root", "", "root", OutcomeRunning)
	create("child", "root", "root", OutcomeRunning)
	create("done", "", "done", "verified")
	tests := []struct {
		name    string
		owner   string
		expiry  int64
		want    string
		acquire bool // another owner may take it
	}{
		{"held by this live process", me, now.Add(time.Minute).UnixNano(), OutcomeRunning, false},
		{"held elsewhere, not expired", "otherhost:1:n", now.Add(time.Minute).UnixNano(), OutcomeRunning, false},
		{"held elsewhere, expired", "otherhost:1:n", now.Add(-time.Second).UnixNano(), OutcomeInterrupted, true},
		{"held by a dead process here", host + ":999999999:n", now.Add(time.Minute).UnixNano(), OutcomeInterrupted, true},
		{"released", "", 0, OutcomeInterrupted, true},
	}
	for _, tt := range tests {
		if _, err := s.db.Exec(`UPDATE runs SET lease_owner = ?, lease_expiry = ? WHERE id = 'root'`, tt.owner, tt.expiry); err != nil {
			t.Fatal(err)
		}
		rows, err := s.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rows {
			got[r.ID] = r.Shown(time.Now())
		}
		want := map[string]string{"root": tt.want, "child": tt.want, "done": "verified"}
		for id := range want {
			if got[id] != want[id] {
				t.Errorf("%s: %s shown %q, want %q", tt.name, id, got[id], want[id])
			}
		}
		err = s.Acquire(ctx, "root", Owner("other"), time.Minute)
		if tt.acquire != (err == nil) {
			t.Errorf("%s: Acquire by another owner: %v, want success %v", tt.name, err, tt.acquire)
		}
	}
}

func TestLeaseTTLFromEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == LeaseTTLEnv {
				return v
			}
			return ""
		}
	}
	if d, err := LeaseTTL(env("")); err != nil || d != DefaultLeaseTTL {
		t.Errorf("unset: %v %v", d, err)
	}
	if d, err := LeaseTTL(env("1500ms")); err != nil || d != 1500*time.Millisecond {
		t.Errorf("1500ms: %v %v", d, err)
	}
	for _, bad := range []string{"soon", "0s", "-1s"} {
		if _, err := LeaseTTL(env(bad)); err == nil || !strings.Contains(err.Error(), LeaseTTLEnv) {
			t.Errorf("%q: %v, want an error naming %s", bad, err, LeaseTTLEnv)
		}
	}
}
