// Package runner runs an evaluation suite: every (task, variant, repeat)
// cell in a copy of its task's workspace, in process through the same
// harness `ioh-lsp run` builds (internal/wire), with `--approve never`
// semantics, bounded parallelism, a deterministic shard, and resumption
// from the results file (a finished cell never runs again).
package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ioh-lsp/ioh-lsp/internal/eval/result"
	"github.com/ioh-lsp/ioh-lsp/internal/eval/suite"
)

// Shard is a deterministic slice of the plan: the cells whose index in
// it is Index modulo Count.
type Shard struct{ Index, Count int }

// All is the whole plan.
var All = Shard{0, 1}

// Has says whether the plan's i-th cell is in the shard.
func (s Shard) Has(i int) bool { return s.Count <= 1 || i%s.Count == s.Index }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads --shard: "i/N", or "N" with the index from
// JOB_COMPLETION_INDEX (a Kubernetes Indexed Job sets it). When both
// name an index they must agree.
func ParseShard(flag string, getenv func(string) string) (Shard, error) {
	if flag == "" {
		return All, nil
	}
	idx, count, hasIdx := strings.Cut(flag, "/")
	if !hasIdx {
		count, idx = idx, ""
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return All, fmt.Errorf("bad --shard %q: want i/N or N with N ≥ 1 (i from 0 to N-1)", flag)
	}
	env := getenv("JOB_COMPLETION_INDEX")
	if idx == "" {
		idx = env
		if idx == "" {
			return All, fmt.Errorf("--shard %s names no index and JOB_COMPLETION_INDEX is not set: write --shard i/%d", flag, n)
		}
	}
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= n {
		return All, fmt.Errorf("bad shard index %q for --shard %s: want 0 to %d", idx, flag, n-1)
	}
	if env != "" && env != idx {
		return All, fmt.Errorf("--shard %s says index %d but JOB_COMPLETION_INDEX=%s: drop the index from the flag (--shard %d)", flag, i, env, n)
	}
	return Shard{i, n}, nil
}

// Plan lists every cell of s in a fixed order (task, variant, repeat in
// the suite's order): the order shards are cut from.
func Plan(s *suite.Suite, variants []suite.Variant, repeat int) []result.Key {
	var keys []result.Key
	for _, t := range s.Tasks {
		for _, v := range variants {
			for r := 1; r <= repeat; r++ {
				keys = append(keys, result.Key{Task: t.ID, Variant: v.Name, Repeat: r})
			}
		}
	}
	return keys
}

// Select picks the variants named in names (all when empty).
func Select(s *suite.Suite, names []string) ([]suite.Variant, error) {
	if len(names) == 0 {
		return s.Variants, nil
	}
	var out []suite.Variant
	for _, n := range names {
		found := false
		for _, v := range s.Variants {
			if v.Name == n {
				out, found = append(out, v), true
			}
		}
		if !found {
			var have []string
			for _, v := range s.Variants {
				have = append(have, v.Name)
			}
			return nil, fmt.Errorf("no variant %q in %s (it has %s)", n, s.Path, strings.Join(have, ", "))
		}
	}
	return out, nil
}

// envWith is getenv with some variables replaced.
func envWith(getenv func(string) string, set map[string]string) func(string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(k string) string {
		if v, ok := set[k]; ok {
			return v
		}
		return getenv(k)
	}
}
