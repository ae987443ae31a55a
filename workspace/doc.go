// Package workspace is the agent's view of the user's files: a confined Root
// that refuses paths escaping it, a gitignore-aware parallel walker with
// grep and find, a ChangeSet overlay of pending edits that reads see and that
// applies atomically, and a debounced recursive watcher.
//
// It is a leaf: it imports no other package of this module.
package workspace
