// Package sandbox runs a command contained: the single place where
// model-produced code leaves the process. A Runner picks the strongest
// backend that really works on this machine (Linux namespaces with Landlock
// and seccomp, macOS sandbox-exec, Windows Job Objects, or the portable
// floor), applies the limits of a Spec, and reports what actually applied
// in the Outcome's mechanisms. A requested backend that cannot run is an
// error, never a silent downgrade; an automatic choice that passes over a
// stronger backend says why (Outcome.Downgrade, Doctor).
//
// On Linux the containment is set up in re-executed children of the
// binary, never in the caller's threads (as runc does with "init"): the
// caller starts /proc/self/exe with a hidden first argument in new user,
// mount, PID, network, IPC, UTS and cgroup namespaces, and that child (PID
// 1 of the sandbox) builds a private root — the host root bound read-only,
// a fresh /proc, a minimal /dev, a private /tmp and HOME, the writable
// roots, an overlay for a Stage, secrets masked — pivots into it, applies
// rlimits, no_new_privs, Landlock (best effort) and a seccomp deny-list,
// drops every capability, forks the command and reaps until it exits; its
// exit kills whatever is left. Memory and process caps use cgroups where
// they are writable (v2 delegated, else v1) and rlimits otherwise; the
// address-space and process rlimits, which would bind PID 1 itself, go to
// a separate exec stage.
//
// Where user namespaces are unavailable (Ubuntu's AppArmor restriction,
// container runtimes, CI runners) the landlock tier runs instead, with no
// namespace and no privilege: a re-executed runner that is a child
// subreaper starts the exec stage, which restricts itself with Landlock
// (reads only the read view, writes only the writable roots and a private
// temporary directory, TCP refused, signals and abstract sockets scoped),
// the same seccomp deny-list plus a socket filter, and no_new_privs; when
// the command ends the runner kills every descendant left. Both Linux
// tiers read only a deny-by-default view (readview.go): system
// directories, the workspace and writable roots, the toolchains and their
// caches; the rest of every home is absent. Spec.Require refuses a run
// below a tier, saying why the stronger ones failed (explain_linux.go).
//
// Init must run first in main (and in the TestMain of every package whose
// tests run the sandbox); the package also dispatches from its own init so
// that a stage skips the rest of the binary's initializers.
//
// A Stage gives a run a verification view: on Linux the workspace is the
// read-only lower layer of an overlay and the changed files a layer above
// it, so staging costs O(changed files); the command's own writes land in
// a private layer that vanishes with the run. Other backends copy the view
// (cloning files where the filesystem can).
//
// It is a leaf: it imports no other package of this module.
package sandbox
