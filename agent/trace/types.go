package trace

// EventWarning reports a setting that was ignored or a problem the user
// should see that did not stop the run (fields: message).
const EventWarning = "warning"
