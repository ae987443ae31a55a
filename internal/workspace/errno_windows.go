//go:build windows

package workspace

import "syscall"

// syscallENOTDIR is returned by lstat when a path component is a file.
var syscallENOTDIR error = syscall.ERROR_PATH_NOT_FOUND
