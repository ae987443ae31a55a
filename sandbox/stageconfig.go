package sandbox

// initConfig is what the parent hands the re-executed init child (as JSON
// on fd 3). It carries no secrets: Env is already allow-listed.
type initConfig struct {
	Argv       []string `json:"argv"`
	Dir        string   `json:"dir"`
	Env        []string `json:"env"`
	Writable   []string `json:"writable"`
	Masked     []string `json:"masked"`
	Network    bool     `json:"network"`
	StageLower string   `json:"stage_lower,omitempty"`
	StageUpper string   `json:"stage_upper,omitempty"`
	Limits     Limits   `json:"limits"`
	// Scratch directories get a private writable overlay (linux tier);
	// after setup, only those that were layered.
	Scratch []string `json:"scratch,omitempty"`
	// CgroupMemory/CgroupPids: the parent applied these caps, so the
	// matching rlimits are not needed.
	CgroupMemory bool `json:"cgroup_memory"`
	CgroupPids   bool `json:"cgroup_pids"`
	// CgroupTasks are the "tasks" files of the run's v1 groups: the
	// stage opens them at once and writes "0" to each from the thread
	// that forks the command (awaitGo).
	CgroupTasks []string `json:"cgroup_tasks,omitempty"`
	// HostUID is the caller's uid outside, for the report.
	HostUID int `json:"host_uid"`
	// Probe: set everything up, report, and exit without running Argv.
	Probe bool `json:"probe"`
	// Tier is the backend the stages serve: "" or BackendLinux for the
	// namespace tier, BackendLandlock for the tier without namespaces.
	Tier string `json:"tier,omitempty"`
	// ReadView lists what the landlock tier's command may read (files and
	// directories, secrets already carved out); see readview.go.
	ReadView []string `json:"read_view,omitempty"`
	// ReadViewTypes has one byte per ReadView entry, 'd' for a directory
	// and 'f' for anything else, as the caller saw it (viewTypes), so the
	// landlock runner need not stat each entry; the kernel's check on the
	// rule's own descriptor still decides (tier_landlock_rules_linux.go).
	ReadViewTypes string `json:"read_view_types,omitempty"`
	// ViewLinks are symlinks among the read view's roots (path → target)
	// that the linux tier recreates in its private root.
	ViewLinks map[string]string `json:"view_links,omitempty"`
}

// initStatus is one JSON line the init child writes on fd 4.
type initStatus struct {
	Mechanisms []Mechanism `json:"mechanisms,omitempty"`
	Error      string      `json:"error,omitempty"`
	Done       bool        `json:"done,omitempty"`
	Exit       int         `json:"exit"`
	Signal     int         `json:"signal,omitempty"`
	CPU        int64       `json:"cpu_ns,omitempty"` // the command's CPU time, user+system
}

// privateHome is HOME inside the Linux sandbox, on its private /tmp.
const privateHome = "/tmp/home"
