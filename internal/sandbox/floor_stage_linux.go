package sandbox

import "os/exec"

// floorStage is the floor backend's stage in the program every Linux
// stage runs in (stageCommand: the small init program when this build has
// one next to it, else this binary).
func floorStage() (*exec.Cmd, error) { return stageCommand(floorArg), nil }
