package sandboxexec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// GoCaches returns the Go build and module caches of this machine (from
// `go env`) as writable directories and the matching environment entries,
// for Options.Writable and Options.Env: without them every contained
// `go build` or `go test` starts from a cold cache in the sandbox's private
// HOME. The directories are created when missing.
func GoCaches(ctx context.Context) (writable, env []string, err error) {
	out, err := exec.CommandContext(ctx, "go", "env", "-json", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go env: %w", err)
	}
	var v struct{ GOCACHE, GOMODCACHE string }
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, nil, fmt.Errorf("go env: %w", err)
	}
	for _, kv := range [][2]string{{"GOCACHE", v.GOCACHE}, {"GOMODCACHE", v.GOMODCACHE}} {
		if kv[1] == "" || kv[1] == "off" || !filepath.IsAbs(kv[1]) {
			continue
		}
		if err := os.MkdirAll(kv[1], 0o755); err != nil {
			return nil, nil, fmt.Errorf("go cache %s: %w", kv[1], err)
		}
		writable = append(writable, kv[1])
		env = append(env, kv[0]+"="+kv[1])
	}
	return writable, env, nil
}
