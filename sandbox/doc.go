// Package sandbox runs a command contained: the single place where
// model-produced code leaves the process. A Runner picks the strongest
// backend that really works on this machine (Linux namespaces with Landlock
// and seccomp, macOS sandbox-exec, Windows Job Objects, or the portable
// floor), applies the limits of a Spec, and reports what actually applied.
//
// It is a leaf: it imports no other package of this module.
package sandbox
