package trace

// Store is the trace database of one workspace. Its owner replaces this
// file with the real SQLite store.
type Store struct{}
