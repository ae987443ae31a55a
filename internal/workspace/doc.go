// Package workspace is the agent's view of the user's files: a confined Root
// that refuses paths escaping it, a parallel walker that applies git's
// ignore rules exactly (plus ripgrep's .ignore files), streaming grep and
// find, a ChangeSet overlay of pending edits that reads see and that
// applies atomically, a debounced recursive watcher, and a trigram Index
// on disk that answers repeated searches exactly as a scan would.
// docs/workspace.md describes the rules and bounds.
//
// It is a leaf: it imports no other package of this module.
package workspace
