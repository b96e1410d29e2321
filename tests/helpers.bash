# Shared helpers for the pvx bats suite.
#
# Environment (all optional):
#   PVX           the pvx binary            (default: tests/../build/pvx)
#   GUEST_DIR     the built static guests   (default: tests/../build/tests/guest)
#   PVX_PLATFORM  platform to test          (default: ptrace)
#
# The rule for guest tests (gVisor's): a guest must behave the same natively and in the sandbox, so
# compare_native runs it both ways and compares stdout and the exit status.

PVX=${PVX:-$BATS_TEST_DIRNAME/../build/pvx}
GUEST_DIR=${GUEST_DIR:-$BATS_TEST_DIRNAME/../build/tests/guest}
PVX_PLATFORM=${PVX_PLATFORM:-ptrace}
# A hung sandbox must fail its test, not stall the suite (status 124 means "timed out").
PVX_TIMEOUT=${PVX_TIMEOUT:-120}
DATA_DIR=$(cd "$BATS_TEST_DIRNAME/data" && pwd -P)
TREE=$DATA_DIR/tree
LINES=$DATA_DIR/lines.txt
BUSYBOX=${BUSYBOX:-/bin/busybox}
BASH_STATIC=${BASH_STATIC:-/bin/bash-static}

# pvx run as root on the host's / gives the guest nobody's file access (README "Security"): as root, let
# nobody reach and write the test's scratch directory, as it could a user's. Tests of root's own file
# access pass --privileged.
if [[ $EUID == 0 && -n ${BATS_RUN_TMPDIR:-} ]]; then
	chmod o+x "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$BATS_RUN_TMPDIR/file" 2>/dev/null
	for _d in "${BATS_TEST_TMPDIR:-}" "${BATS_FILE_TMPDIR:-}"; do
		[[ -z $_d || ! -d $_d ]] || chmod 0777 "$_d"
	done
	unset _d
fi

# Extra options for `pvx run` used by compare_native/pvx_run (e.g. PVX_OPTS=(--rw)).
PVX_OPTS=()
# File fed to stdin of both runs in compare_native (default /dev/null).
COMPARE_STDIN=/dev/null

require_pvx() {
	if [[ ! -x $PVX ]]; then
		echo "pvx not built: $PVX (set PVX=...)" >&2
		return 1
	fi
}

# guest NAME: the path of a built guest (NAME or NAME.glibc); fails the test when it is missing.
guest() {
	local g=$GUEST_DIR/$1
	if [[ ! -x $g ]]; then
		echo "guest not built: $g (run make in the build dir, or set GUEST_DIR)" >&2
		return 1
	fi
	printf '%s\n' "$(cd "${g%/*}" && pwd -P)/${g##*/}"
}

# require_prog PATH: skip the test when a host program it needs is absent.
require_prog() {
	[[ -x $1 ]] || skip "$1 not installed"
}

# require_syscall NAME: skip the test while `pvx syscalls` lists NAME as unsupported (a later issue).
require_syscall() {
	require_pvx || return 1
	if "$PVX" syscalls | grep -Eq "^[0-9]+ +$1 +unsupported"; then
		skip "syscall $1 is not supported yet"
	fi
}

# Run "$@" with every fd above 2 closed (bats keeps some open), the way a fresh guest starts.
_exec_stdio_only() {
	local f n
	for f in /proc/$BASHPID/fd/*; do
		n=${f##*/}
		if ((n > 2)); then
			eval "exec $n>&-" 2>/dev/null || true
		fi
	done
	exec "$@"
}

# pvx_run ARGS...: `run` pvx on the configured platform with PVX_OPTS; stdout in $output (stderr too,
# as bats does), status in $status. Use pvx_run_split when stdout and stderr must be told apart.
pvx_run() {
	require_pvx || return 1
	run timeout -k 5 "$PVX_TIMEOUT" "$PVX" run --platform="$PVX_PLATFORM" "${PVX_OPTS[@]}" -- "$@"
}

# pvx_run_split ARGS...: like pvx_run but stdout -> $output / $PVX_STDOUT, stderr -> $PVX_STDERR_TEXT.
pvx_run_split() {
	require_pvx || return 1
	local out=$BATS_TEST_TMPDIR/split.out err=$BATS_TEST_TMPDIR/split.err
	status=0
	timeout -k 5 "$PVX_TIMEOUT" "$PVX" run --platform="$PVX_PLATFORM" "${PVX_OPTS[@]}" -- "$@" \
		>"$out" 2>"$err" <"$COMPARE_STDIN" || status=$?
	output=$(<"$out")
	PVX_STDOUT=$out
	PVX_STDERR_TEXT=$(<"$err")
}

# compare_native PROG ARGS...: run PROG natively (only fds 0-2 open) and under
# `pvx run --platform=$PVX_PLATFORM ${PVX_OPTS[@]} -- PROG ARGS`, both with stdin from $COMPARE_STDIN
# and in the current directory; fail unless stdout and exit status are identical.
# Afterwards: $native_status, $sandbox_status, $native_out, $sandbox_out (files), $sandbox_err (file).
compare_native() {
	require_pvx || return 1
	local d=$BATS_TEST_TMPDIR/cmp.$((++_cmp_seq))
	mkdir -p "$d"
	native_out=$d/native.out sandbox_out=$d/sandbox.out sandbox_err=$d/sandbox.err
	native_status=0 sandbox_status=0
	# Under timeout(1) like the sandbox (--foreground: in our process group): it resets SIGINT/SIGQUIT/SIGHUP/SIGTERM,
	# which a background bats (SIGINT ignored) would otherwise pass to the native run only.
	(_exec_stdio_only timeout --foreground -k 5 "$PVX_TIMEOUT" "$@") >"$native_out" 2>"$d/native.err" <"$COMPARE_STDIN" ||
		native_status=$?
	timeout -k 5 "$PVX_TIMEOUT" "$PVX" run --platform="$PVX_PLATFORM" "${PVX_OPTS[@]}" -- "$@" \
		>"$sandbox_out" 2>"$sandbox_err" <"$COMPARE_STDIN" || sandbox_status=$?
	if [[ $native_status != "$sandbox_status" ]] || ! cmp -s "$native_out" "$sandbox_out"; then
		{
			echo "MISMATCH running: $*"
			echo "native status: $native_status   sandbox status: $sandbox_status"
			echo "--- stdout diff (native vs sandbox):"
			diff -a -u "$native_out" "$sandbox_out" | head -60
			echo "--- sandbox stderr:"
			head -c 3000 "$sandbox_err"
			echo "--- native stderr:"
			head -c 1000 "$d/native.err"
		} >&2
		return 1
	fi
	# a guest whose native run prints nothing at all is a broken test, not a pass
	if [[ ! -s $native_out && ${COMPARE_ALLOW_EMPTY:-0} != 1 ]]; then
		echo "native run of $* printed nothing; the comparison would be vacuous" >&2
		return 1
	fi
}

# compare_native_status EXPECTED PROG ARGS...: compare_native and also require a specific native status,
# so a test cannot pass because both sides fail the same way.
compare_native_status() {
	local want=$1
	shift
	compare_native "$@" || return 1
	if [[ $native_status != "$want" ]]; then
		echo "native status $native_status, expected $want: the test itself is broken" >&2
		return 1
	fi
}

# compare_flavours WANT_STATUS GUEST ARGS...: compare_native_status for both builds of a test guest
# (GUEST with musl, GUEST.glibc); afterwards the variables of the glibc run.
compare_flavours() {
	local want=$1 g=$2 f
	shift 2
	for f in "" .glibc; do
		compare_native_status "$want" "$(guest "$g$f")" "$@" || return 1
	done
}

# has LINE...: each LINE is a whole line of the last sandbox run's output ($sandbox_out)
has() {
	local l
	for l in "$@"; do
		grep -qxF -- "$l" "$sandbox_out" || {
			echo "missing line: $l" >&2
			return 1
		}
	done
}

# sha256 of a file
sha256_of() {
	sha256sum "$1" | cut -d' ' -f1
}

# assert_contains HAYSTACK NEEDLE
assert_contains() {
	if [[ $1 != *"$2"* ]]; then
		echo "expected to find: $2" >&2
		echo "in: $1" >&2
		return 1
	fi
}

assert_not_contains() {
	if [[ $1 == *"$2"* ]]; then
		echo "did not expect: $2" >&2
		echo "in: $1" >&2
		return 1
	fi
}

# assert_status WANT (after run/pvx_run)
assert_status() {
	if [[ $status != "$1" ]]; then
		echo "status $status, expected $1; output:" >&2
		printf '%s\n' "$output" >&2
		return 1
	fi
}

# fail_msg TEXT: fail the test, saying why (for a fact the test needs from the sources, which must not skip)
fail_msg() {
	echo "$*" >&2
	return 1
}
