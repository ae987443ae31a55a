# Shared helpers of the bench scripts (sourced by them; not a bench: make bench runs bench/*.sh).

# need NAME TOOL:PACKAGE...: installs the Debian packages of missing tools
# when root, else fails naming them.
need() {
	local name=$1 p missing=""
	shift
	for p in "$@"; do
		command -v "${p%%:*}" >/dev/null 2>&1 || missing="$missing ${p#*:}"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" = 0 ]; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	else
		echo "$name: missing$missing (install them, or run as root)" >&2
		exit 1
	fi
}

# ratio A B: A / B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
