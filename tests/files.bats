#!/usr/bin/env bats
# The guest's file system: confined to --root (no escape through "..", absolute or relative symlinks,
# /proc/self/root), read-only unless --rw.

load helpers
bats_require_minimum_version 1.5.0

SECRET="HOST SECRET outside the root"

setup() {
	require_pvx
	T=$BATS_TEST_TMPDIR
	cd "$T"
	# outside the root
	printf '%s\n' "$SECRET" >"$T/marker"
	printf '%s\n' "$SECRET" >"$T/escaped-target"
	# the root
	R=$T/root
	mkdir -p "$R/bin" "$R/data/sub" "$R/etc"
	cp "$(guest catfile)" "$R/bin/catfile"
	cp "$(guest writefile)" "$R/bin/writefile"
	cp "$(guest fileio)" "$R/bin/fileio"
	if [[ -x $BUSYBOX ]]; then cp "$BUSYBOX" "$R/bin/busybox"; fi
	printf 'root marker\n' >"$R/marker"
	printf 'inside\n' >"$R/data/inside.txt"
	printf 'guest passwd\n' >"$R/etc/passwd"
	ln -s /etc "$R/abs"                              # absolute: must mean the root's /etc
	ln -s ../../../.. "$R/rel"                        # relative, climbs above the root
	ln -s .. "$R/up"
	ln -s "$T" "$R/tmpabs"                            # host path of the directory above the root
	ln -s "$T/marker" "$R/hostmarker"                 # host path of the secret itself
	ln -s /data/inside.txt "$R/inside"                # absolute, inside: must work
	ln -s ../../../../../../../../marker "$R/data/sub/deep"
	ln -s chain2 "$R/chain1"
	ln -s /../../../marker "$R/chain2"
	ln -s "/proc/self/root$T/marker" "$R/viaproc"
}

# in_root ARGS...: pvx run --root $R ARGS
in_root() {
	run "$PVX" run --platform="$PVX_PLATFORM" --root "$R" "${PVX_OPTS[@]}" -- "$@"
}

no_secret() {
	assert_not_contains "$output" "HOST SECRET"
}

@test "the root's own files are readable, the program is found inside the root" {
	in_root /bin/catfile /data/inside.txt /inside /abs/passwd
	assert_status 0
	[[ $output == $'inside\ninside\nguest passwd' ]]
}

@test "a program that exists only on the host is not found inside the root" {
	require_prog "$BUSYBOX"
	rm "$R/bin/busybox"
	run -127 "$PVX" run --platform="$PVX_PLATFORM" --root "$R" -- /bin/busybox true
	assert_not_contains "$output" "BusyBox"
}

@test "'..' at the root stays at the root" {
	in_root /bin/catfile /../marker /../../../../marker /data/../../../marker
	assert_status 0
	no_secret
	[[ $output == $'root marker\nroot marker\nroot marker' ]]
}

@test "relative '..' from the working directory stays in the root" {
	cd "$R/data/sub"
	in_root /bin/catfile ../../../../../../marker
	assert_status 0
	no_secret
	[[ $output == "root marker" ]]
}

@test "relative symlinks climbing above the root are clamped" {
	in_root /bin/catfile /rel/marker /up/marker /data/sub/deep /chain1
	assert_status 0
	no_secret
	[[ $output == $'root marker\nroot marker\nroot marker\nroot marker' ]]
}

@test "absolute symlinks resolve inside the root" {
	in_root /bin/catfile /abs/passwd /hostmarker /tmpabs/marker
	no_secret
	assert_status 1
	[[ $output == $'guest passwd\n/hostmarker: ENOENT\n/tmpabs/marker: ENOENT' ]]
}

@test "the host's absolute paths do not exist inside the root" {
	in_root /bin/catfile "$T/marker" /etc/hostname
	assert_status 1
	no_secret
	assert_contains "$output" "$T/marker: ENOENT"
	assert_contains "$output" "/etc/hostname: ENOENT"
}

@test "/proc/self/root does not lead out of the root" {
	in_root /bin/catfile "/proc/self/root$T/marker" "/proc/1/root$T/marker" /viaproc \
		"/proc/self/cwd/../marker" "/proc/self/root/../../marker"
	no_secret
	[[ $status -ne 0 ]]
}

@test "/proc/self/root does not lead out of the root even with a /proc in the root" {
	mkdir -p "$R/proc"
	in_root /bin/catfile "/proc/self/root$T/marker" "/proc/$$/root$T/marker" /viaproc
	no_secret
	[[ $status -ne 0 ]]
}

@test "readlink shows the symlink's literal target" {
	require_prog "$BUSYBOX"
	in_root /bin/busybox readlink /abs
	assert_status 0
	[[ $output == /etc ]]
	in_root /bin/busybox readlink /rel
	[[ $output == ../../../.. ]]
	in_root /bin/busybox readlink /hostmarker
	[[ $output == "$T/marker" ]]
	# -f canonicalises inside the root
	in_root /bin/busybox readlink -f /rel/data/../abs
	assert_status 0
	[[ $output == /etc ]]
}

@test "busybox cat and ls inside the root see only the root" {
	require_prog "$BUSYBOX"
	in_root /bin/busybox cat /rel/marker /../marker
	assert_status 0
	no_secret
	[[ $output == $'root marker\nroot marker' ]]
	in_root /bin/busybox cat /hostmarker
	[[ $status -ne 0 ]]
	no_secret
	in_root /bin/busybox ls -1 /
	assert_status 0
	[[ $output == "$(cd "$R" && ls -1)" ]]
	in_root /bin/busybox ls -1 /..
	[[ $output == "$(cd "$R" && ls -1)" ]]
	in_root /bin/busybox ls -1 /rel/
	[[ $output == "$(cd "$R" && ls -1)" ]]
}

@test "the working directory: the host's when inside the root, else /" {
	require_prog "$BUSYBOX"
	cd "$R/data"
	in_root /bin/busybox pwd
	assert_status 0
	[[ $output == /data ]]
	cd "$T"
	in_root /bin/busybox pwd
	assert_status 0
	[[ $output == / ]]
	# a relative open from a cwd outside the root cannot reach the host
	in_root /bin/catfile marker
	no_secret
	[[ $output == "root marker" ]]
}

@test "--root given as a relative path" {
	cd "$T"
	run "$PVX" run --platform="$PVX_PLATFORM" --root root -- /bin/catfile /data/inside.txt
	assert_status 0
	[[ $output == inside ]]
}

@test "stat of / inside the root is the root directory" {
	in_root /bin/busybox stat -c '%i %h' /
	assert_status 0
	[[ $output == "$(stat -c '%i %h' "$R")" ]]
	in_root /bin/busybox stat -c '%i' /..
	[[ $output == "$(stat -c '%i' "$R")" ]]
}

@test "read-only by default: creating a file under the default root fails with EROFS" {
	run "$PVX" run --platform="$PVX_PLATFORM" -- "$(guest writefile)" "$T/created-by-guest" hi
	assert_status 1
	[[ $output == "open: EROFS" ]]
	[[ ! -e $T/created-by-guest ]]
}

@test "read-only by default: writing an existing file fails with EROFS and leaves it alone" {
	printf 'original\n' >"$T/existing"
	run "$PVX" run --platform="$PVX_PLATFORM" -- "$(guest writefile)" "$T/existing" changed wronly
	assert_status 1
	[[ $output == "open: EROFS" ]]
	run "$PVX" run --platform="$PVX_PLATFORM" -- "$(guest writefile)" "$T/existing" changed rdwr
	assert_status 1
	[[ $output == "open: EROFS" ]]
	run "$PVX" run --platform="$PVX_PLATFORM" -- "$(guest writefile)" "$T/existing" changed
	assert_status 1
	[[ $output == "open: EROFS" ]]
	[[ $(<"$T/existing") == original ]]
}

@test "read-only --root: writes fail with EROFS, reads work" {
	in_root /bin/writefile /data/new hi
	assert_status 1
	[[ $output == "open: EROFS" ]]
	[[ ! -e $R/data/new ]]
	in_root /bin/catfile /data/inside.txt
	assert_status 0
}

@test "read-only: busybox cannot write either" {
	require_prog "$BUSYBOX"
	run bash -c "echo data | '$PVX' run --platform=$PVX_PLATFORM -- '$BUSYBOX' tee '$T/tee-out'"
	[[ $status -ne 0 ]]
	assert_contains "$output" "Read-only file system"
	[[ ! -e $T/tee-out ]]
}

@test "--rw: writes inside the root reach the host directory" {
	PVX_OPTS=(--rw)
	in_root /bin/writefile /data/new "hello from the guest"
	assert_status 0
	[[ $output == OK ]]
	[[ $(<"$R/data/new") == "hello from the guest" ]]
	# and overwrite
	in_root /bin/writefile /data/new "second"
	assert_status 0
	[[ $(<"$R/data/new") == second ]]
}

@test "--rw: writing through escaping symlinks stays inside the root" {
	PVX_OPTS=(--rw)
	ln -s ../../../../escaped-target "$R/escape-rel"
	ln -s "$T/escaped-target" "$R/escape-abs"
	in_root /bin/writefile /escape-rel pwned
	in_root /bin/writefile /escape-abs pwned
	in_root /bin/writefile /../escaped-target pwned
	in_root /bin/writefile /rel/escaped-target pwned
	[[ $(<"$T/escaped-target") == "$SECRET" ]]
	# what was created went into the root
	[[ $(<"$R/escaped-target") == pwned ]]
}

@test "--rw: busybox tee writes a file inside the root" {
	require_prog "$BUSYBOX"
	PVX_OPTS=(--rw)
	run bash -c "echo via-tee | '$PVX' run --platform=$PVX_PLATFORM --rw --root '$R' -- /bin/busybox tee /data/tee-out"
	assert_status 0
	[[ $output == via-tee ]]
	[[ $(<"$R/data/tee-out") == via-tee ]]
}

@test "fileio guest agrees natively and inside a root that holds the same tree" {
	mkdir -p "$R$DATA_DIR"
	cp -a "$TREE" "$R$DATA_DIR/"
	cp -a "$LINES" "$R$DATA_DIR/"
	cd /
	native_status=0
	"$(guest fileio)" "$TREE" "$LINES" >"$T/native.out" || native_status=$?
	in_root /bin/fileio "$TREE" "$LINES"
	assert_status "$native_status"
	diff -u "$T/native.out" <(printf '%s\n' "$output")
}

@test "symlink loops give ELOOP inside the root" {
	ln -s loop "$R/loop"
	ln -s loop-b "$R/loop-a"
	ln -s loop-a "$R/loop-b"
	in_root /bin/catfile /loop /loop-a /data/../loop-b
	assert_status 1
	[[ $output == $'/loop: ELOOP\n/loop-a: ELOOP\n/data/../loop-b: ELOOP' ]]
}

@test "a chain of 30 symlinks resolves, 50 give ELOOP (Linux allows 40)" {
	local i
	ln -s /data/inside.txt "$R/c0"
	for ((i = 1; i <= 50; i++)); do ln -s "c$((i - 1))" "$R/c$i"; done
	in_root /bin/catfile /c30
	assert_status 0
	[[ $output == inside ]]
	in_root /bin/catfile /c50
	assert_status 1
	[[ $output == "/c50: ELOOP" ]]
}

@test "chdir through an escaping symlink lands inside the root" {
	require_prog "$BUSYBOX"
	in_root /bin/busybox sh -c 'cd -P /rel && pwd -P && cd -P /up/data && pwd -P && cd .. && cd .. && pwd -P'
	assert_status 0
	[[ $output == $'/\n/data\n/' ]]
}

@test "openat relative to a directory fd (stdin) inside the root cannot climb out" {
	# the guest's fd 0 is the root's /bin directory, handed in as stdin
	in_root /bin/catfile --at 0 ../../../../marker ../data/inside.txt <"$R/bin"
	assert_status 0
	no_secret
	[[ $output == $'root marker\ninside' ]]
}

@test "a directory fd from outside the root (stdin) does not open files outside the root" {
	in_root /bin/catfile --at 0 marker ../marker <"$T"
	no_secret
	assert_status 1
}
