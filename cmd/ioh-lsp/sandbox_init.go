package main

// maybeSandboxInit runs the sandbox's re-executed init child when this
// process was started as one, and reports whether it did. Its owner (the
// sandbox) replaces this file.
func maybeSandboxInit() bool { return false }
