//go:build unix && !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
)

// floorStage re-executes this binary as the floor backend's stage.
func floorStage() (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	return exec.Command(self, floorArg), nil
}
