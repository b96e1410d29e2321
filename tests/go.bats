#!/usr/bin/env bats
# Issue 13, Go: static Go programs (CGO_ENABLED=0, Debian's golang-go) natively and under pvx: goroutines and
# timers, os/exec of the static busybox, file I/O, a net/http server and client over 127.0.0.1; and Go
# standard-library test binaries (`go test -c`), each run natively and under pvx with its result reported.
# Everything is built by tests/go/build-go into $GO_DIR (default: the build dir's tests/go); the std list is
# $GO_STD_TESTS (default: the script's). Skipped with a reason when `go` is missing.

load helpers

GO_DIR=${GO_DIR:-${PVX_BUILD:-$BATS_TEST_DIRNAME/../build}/tests/go}
# how long one std test binary may run, natively or under pvx (-test.short)
GO_TEST_TIMEOUT=${GO_TEST_TIMEOUT:-900}

setup_file() {
	command -v go >/dev/null || return 0
	mkdir -p "$GO_DIR"
	# its progress as TAP comments
	"$BATS_TEST_DIRNAME/go/build-go" "$GO_DIR" 2>&1 | sed 's/^/# /' >&3
	return "${PIPESTATUS[0]}"
}

setup() {
	command -v go >/dev/null || skip "go is not installed (./setup installs golang-go)"
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "Go: goroutines, channels, time.Sleep, timers and tickers" {
	compare_native_status 0 "$GO_DIR/hello"
	grep -qx 'goroutine results: \[0 1 4 9 16 25 36 49\]' "$sandbox_out"
	grep -qx 'time.After fired' "$sandbox_out"
}

@test "Go: os/exec runs the static busybox (vfork from a Go thread, then execve)" {
	require_prog "$BUSYBOX"
	compare_native_status 0 "$GO_DIR/exec" "$BUSYBOX"
	grep -qx 'busybox false: exit status 1' "$sandbox_out"
	grep -qx 'busybox tr: "PIPED THROUGH TR\\n" <nil>' "$sandbox_out"
}

@test "Go: file I/O in a --rw directory" {
	PVX_OPTS=(--rw)
	compare_native_status 0 "$GO_DIR/fileio"
	grep -qx 'directory: \[b.txt c.txt\]' "$sandbox_out"
}

@test "Go: a net/http server and client over 127.0.0.1" {
	compare_native_status 0 "$GO_DIR/httpd"
	grep -qx 'POST /echo: 200 "POST BODY"' "$sandbox_out"
}

# Tests left out, per package, because they fail natively on Debian's Go for reasons of packaging:
#   time: TestLoadLocationFromTZData reads $GOROOT/lib/time/zoneinfo.zip, which Debian does not ship
declare -gA GO_STD_EXCLUDE=([time]=TestLoadLocationFromTZData)
# Packages known to fail under pvx, with the open issue that fixes them: reported and skipped while they fail
# (an expected failure), and the test fails once one passes, so that the entry is removed.
declare -gA GO_STD_PENDING=(
)

# go_std PKG: run PKG's test binary natively and under pvx (in the package's source directory, as `go test`
# does, -test.short); report both results; fail when it passes natively and not under pvx.
go_std() {
	local pkg=$1 bin=$GO_DIR/std/${1//\//_}.test src run=.
	[[ -x $bin ]] || skip "$pkg.test not built (not in GO_STD_TESTS)"
	src=$(go env GOROOT)/src/$pkg
	if [[ -n ${GO_STD_EXCLUDE[$pkg]:-} ]]; then
		run="^($("$bin" -test.list '.*' | grep -E '^(Test|Example|Fuzz)' |
			grep -vxE "${GO_STD_EXCLUDE[$pkg]}" | paste -sd'|'))\$"
	fi
	local tmp=$BATS_TEST_TMPDIR/gotmp
	mkdir -p "$tmp"
	chmod 0777 "$tmp"
	local ns=0 ps=0
	(cd "$src" && TMPDIR=$tmp _exec_stdio_only timeout -k 5 "$GO_TEST_TIMEOUT" "$bin" -test.short \
		-test.run="$run" -test.timeout=$((GO_TEST_TIMEOUT - 30))s) >"$BATS_TEST_TMPDIR/native.out" 2>&1 </dev/null || ns=$?
	# GOCACHE: tests that run `go build` need a cache the guest (nobody, as root) can write; natively root's is
	(cd "$src" && timeout -k 5 "$GO_TEST_TIMEOUT" "$PVX" run --platform="$PVX_PLATFORM" --rw --env TMPDIR="$tmp" \
		--env GOCACHE="$tmp/gocache" \
		-- "$bin" -test.short -test.run="$run" -test.timeout=$((GO_TEST_TIMEOUT - 30))s) >"$BATS_TEST_TMPDIR/pvx.out" 2>&1 \
		</dev/null || ps=$?
	local nr=PASS pr=PASS
	((ns == 0)) || nr="FAIL($ns)"
	((ps == 0)) || pr="FAIL($ps)"
	echo "# go std $pkg [$PVX_PLATFORM]: native $nr, pvx $pr" >&3
	if ((ns != 0)); then
		tail -20 "$BATS_TEST_TMPDIR/native.out" >&2
		skip "$pkg tests fail natively too (status $ns)"
	fi
	local pending=${GO_STD_PENDING[$pkg]:-}
	if ((ps == 0)) && [[ -n $pending ]]; then
		echo "$pkg passes under pvx now: remove it from GO_STD_PENDING ($pending)" >&2
		return 1
	fi
	if ((ps != 0)) && [[ -n $pending ]]; then
		grep -E '^(--- FAIL|panic|fatal error)' "$BATS_TEST_TMPDIR/pvx.out" | head -10 | sed 's/^/# /' >&3
		skip "expected to fail under pvx until $pending"
	fi
	if ((ps != 0)); then
		echo "--- pvx output (tail):" >&2
		grep -E '^(--- FAIL|FAIL|panic|fatal error)' "$BATS_TEST_TMPDIR/pvx.out" | head -30 >&2
		tail -30 "$BATS_TEST_TMPDIR/pvx.out" >&2
		return 1
	fi
}

@test "Go std tests: strings" { go_std strings; }
@test "Go std tests: sort" { go_std sort; }
@test "Go std tests: strconv" { go_std strconv; }
@test "Go std tests: encoding/json" { go_std encoding/json; }
@test "Go std tests: os" { go_std os; }
@test "Go std tests: time" { go_std time; }
@test "Go std tests: sync" { go_std sync; }
@test "Go std tests: net" { go_std net; }
@test "Go std tests: os/exec" { go_std os/exec; }
@test "Go std tests: os/signal" { go_std os/signal; }
@test "Go std tests: bufio" { go_std bufio; }
@test "Go std tests: context" { go_std context; }
