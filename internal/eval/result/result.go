// Package result holds an evaluation's cells as JSON Lines: one finished
// (task, variant, repeat) a line, appended whole, so an interrupted eval
// keeps every finished cell and a torn last line is dropped, never read
// as a result.
package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
)

// FileName is the results file in an eval's output directory.
const FileName = "results.jsonl"

// Tokens are a cell's token counts by part.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	// Total is what the token budget counts (input + cache writes +
	// output).
	Total int64 `json:"total"`
}

// Cell is one finished run of a task under a variant.
type Cell struct {
	Task    string `json:"task"`
	Variant string `json:"variant"`
	Repeat  int    `json:"repeat"`
	// Outcome is the run's outcome (agent.Outcome) or "error" when the
	// run could not start (Error says why).
	Outcome  string  `json:"outcome"`
	Verified bool    `json:"verified"`
	Steps    int     `json:"steps"`
	Tokens   Tokens  `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
	// Unpriced counts calls nothing could price (the cost is then a
	// lower bound).
	Unpriced     int    `json:"unpriced,omitempty"`
	WallMS       int64  `json:"wall_ms"`
	FailedEdits  int    `json:"failed_edits"`
	VerifyRounds int    `json:"verify_rounds"`
	RunID        string `json:"run_id,omitempty"`
	// Trace is the run's trace database, relative to the output directory.
	Trace string `json:"trace,omitempty"`
	Error string `json:"error,omitempty"`
}

// Key identifies a cell.
type Key struct {
	Task, Variant string
	Repeat        int
}

// Key is c's key.
func (c Cell) Key() Key { return Key{c.Task, c.Variant, c.Repeat} }

func (k Key) String() string { return fmt.Sprintf("%s/%s/%d", k.Task, k.Variant, k.Repeat) }

// Read reads a results file. A last line without its newline (a write
// torn by a crash) is not a result: Read reports its offset in torn so
// the next append starts there. A complete line that does not decode is
// an error naming the file and line.
func Read(path string) (cells []Cell, torn int64, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, -1, nil
	}
	if err != nil {
		return nil, -1, err
	}
	torn = -1
	line, off := 0, int64(0)
	for len(data) > 0 {
		line++
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			torn = off
			break
		}
		raw := bytes.TrimSpace(data[:i])
		if len(raw) > 0 {
			var c Cell
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, -1, fmt.Errorf("%s:%d: not a result line: %v", path, line, err)
			}
			if c.Task == "" || c.Variant == "" {
				return nil, -1, fmt.Errorf("%s:%d: a result line needs task and variant", path, line)
			}
			cells = append(cells, c)
		}
		off += int64(i + 1)
		data = data[i+1:]
	}
	return cells, torn, nil
}

// Writer appends cells to a results file, each in one write, synced.
type Writer struct {
	mu sync.Mutex
	f  *os.File
}

// Append opens path for appending, cutting a torn last line first.
func Append(path string, torn int64) (*Writer, error) {
	if torn >= 0 {
		if err := os.Truncate(path, torn); err != nil {
			return nil, fmt.Errorf("cut the torn last line of %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f}, nil
}

// Add appends c as one line.
func (w *Writer) Add(c Cell) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return w.f.Sync()
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// Sort orders cells by task, variant and repeat.
func Sort(cells []Cell) {
	sort.SliceStable(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		if a.Variant != b.Variant {
			return a.Variant < b.Variant
		}
		return a.Repeat < b.Repeat
	})
}

// Merge reads results files and returns their cells, sorted, each key
// once. The same key twice with different outcomes (two shards that ran
// one cell) is an error naming both files.
func Merge(paths ...string) ([]Cell, error) {
	seen := map[Key]string{}
	byKey := map[Key]Cell{}
	var out []Cell
	for _, p := range paths {
		cells, _, err := Read(p)
		if err != nil {
			return nil, err
		}
		for _, c := range cells {
			k := c.Key()
			if prev, ok := seen[k]; ok {
				if byKey[k].Outcome != c.Outcome || byKey[k].Verified != c.Verified {
					return nil, fmt.Errorf("cell %s is in %s (%s) and in %s (%s): merge results of one suite's shards, each run once", k, prev, byKey[k].Outcome, p, c.Outcome)
				}
				continue
			}
			seen[k], byKey[k] = p, c
			out = append(out, c)
		}
	}
	Sort(out)
	return out, nil
}

// WriteAll writes cells as JSON Lines.
func WriteAll(w io.Writer, cells []Cell) error {
	bw := bufio.NewWriter(w)
	for _, c := range cells {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		bw.Write(append(b, '\n'))
	}
	return bw.Flush()
}
