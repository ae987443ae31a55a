package main

// actions are the probes, by name. Each says what it tries; the tests
// that use it name the case.
var actions = map[string]action{
	// files (fs_linux.go)
	"write":              {1, write},            // write PATH: create or truncate PATH with "x"
	"read":               {1, read},             // read PATH: print PATH
	"link":               {2, link},             // link OLD NEW: hardlink OLD as NEW, then append through NEW
	"setxattr":           {3, setxattr},         // setxattr PATH NAME VALUE
	"fchmodat":           {3, fchmodat},         // fchmodat DIR NAME MODE: NAME relative to DIR opened O_PATH
	"fchmod-opath":       {2, fchmodOPath},      // fchmod-opath PATH MODE: on an O_PATH descriptor (the kernel says EBADF)
	"setfcap":            {1, setfcap},          // setfcap PATH: give PATH cap_net_raw (needs CAP_SETFCAP)
	"setflags":           {1, setflags},         // setflags PATH: chattr +d through a descriptor opened for reading
	"fchmod":             {2, fchmod},           // fchmod PATH MODE: on a descriptor opened for reading
	"setid":              {2, setID},            // setid METHOD PATH: a set-id mode through one call
	"setid-all":          {1, setIDAll},         // setid-all DIR METHOD...: each method on DIR/METHOD, printing what worked
	"mount-allows-setid": {1, mountAllowsSetID}, // mount-allows-setid PATH: PATH's mount is neither nosuid nor nodev

	// network (net_linux.go)
	"tcp":        {1, dial("tcp")},  // tcp ADDR: connect, send "ping", read 4 bytes back
	"udp":        {1, dial("udp")},  // udp ADDR: the same over UDP
	"unix":       {1, dial("unix")}, // unix PATH: the same over a unix socket
	"dns":        {2, dns},          // dns SERVER NAME: resolve NAME through SERVER
	"socketpair": {0, socketpair},   // socketpair: a pair of connected unix sockets passes a byte

	// processes and system calls (proc_linux.go)
	"kill":          {1, kill},         // kill PID: send PID SIGCONT
	"ptrace":        {1, ptrace},       // ptrace PID: attach to PID and detach
	"spawn":         {1, spawn},        // spawn N: start N `sleep 30`
	"sleep":         {1, sleep},        // sleep SECONDS: say "ready" once signals are handled, then sleep
	"spin":          {1, spin},         // spin DURATION: burn DURATION of CPU time (not wall time)
	"syscall":       {1, rawSyscall},   // syscall NAME: one call the seccomp filter must refuse
	"ioctl-reaches": {1, ioctlReaches}, // ioctl-reaches CMD: an ioctl CMD on /dev/null gets past the filter

	// memory and IPC (mem_linux.go)
	"alloc":    {1, alloc},             // alloc BYTES: allocate and touch BYTES
	"reserve":  {2, reserve},           // reserve BYTES WRITABLE: reserve PROT_NONE, make WRITABLE of it writable, touch it
	"memfd":    {1, fillAs("memfd")},   // memfd BYTES [COUNT]: grow a memfd and touch it through a shared mapping
	"shmanon":  {1, fillAs("shmanon")}, // shmanon BYTES [COUNT]: touch a MAP_SHARED|MAP_ANONYMOUS mapping
	"sysv":     {1, fillAs("sysv")},    // sysv BYTES [COUNT]: COUNT filled System V segments, left detached
	"shm-read": {1, shmRead},           // shm-read ID: print System V segment ID
	"shm-make": {1, shmMake},           // shm-make KEY: create a 1 MiB segment with KEY and leave it
	"shm-fill": {2, shmFill},           // shm-fill N SIZE [rm]: N private segments filled and detached, kept unless rm
	"mq-make":  {1, mqMake},            // mq-make NAME: create a POSIX message queue and leave it
}
