#!/usr/bin/env bats
# Paths from a directory deeper than PATH_MAX (issue 15): Linux limits only the string a call is given
# (4096 bytes with the NUL), so a relative path from a cwd or dirfd whose own path is longer must work;
# pvx walks it from the directory's fd a component at a time (sentry/fs/path_long.c). Static guest
# tests/guest/deep_path.c (musl and glibc), compared with its native run; the hostile climbs are also
# run with --root, where they must stay inside it.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
	PVX_OPTS=(--rw)
}

@test "deep path: mkdir, chdir, create, stat, rename, link, symlink, unlink, rmdir 30 levels (6000 bytes) down; getcwd ENAMETOOLONG" {
	compare_flavours 0 deep_path ops
	has 'getcwd(8192): ENAMETOOLONG' 'getcwd(10): ENAMETOOLONG' 'read f: ok hello' 'rename f g: ok' \
		'read through s: ok hello' 'fstatat(x, ../g): ok' 'rmdir x (not empty): ENOTEMPTY' 'removed all'
	grep -qx 'getcwd again after [1-9][0-9]* levels up: yes, length ok' "$sandbox_out"
}

@test "deep path (hostile): .. past the root, symlink loops, a 256-byte component, strings of 4095/4096/4097 bytes" {
	compare_flavours 0 deep_path hostile
	has 'open l1: ELOOP' 'stat l1/x: ELOOP' 'open 256-byte name: ENAMETOOLONG' 'open 255-byte name: ENOENT' \
		'open of a 4095-byte string: ok' 'open of a 4096-byte string: ENAMETOOLONG' \
		'open of a 4097-byte string: ENAMETOOLONG' 'removed all'
}

@test "deep path (hostile): with --root, 1300 '..', a climbing symlink and an absolute one all end at the root's marker" {
	local root=$BATS_TEST_TMPDIR/root
	mkdir -p "$root/w"
	chmod 0777 "$root/w"
	cp "$(guest deep_path)" "$root/deep_path"
	echo inside >"$root/marker"
	echo outside >"$BATS_TEST_TMPDIR/marker"
	cd "$root/w"
	PVX_OPTS=(--rw --root "$root")
	pvx_run /deep_path hostile
	assert_status 0
	for l in '1300 .. then marker: ok inside' 'up/marker: ok inside' 'abs: ok inside' 'removed all'; do
		grep -qxF "$l" <<<"$output" || fail_msg "missing: $l in: $output"
	done
	pvx_run /deep_path ops
	assert_status 0
	grep -qx 'removed all' <<<"$output" || fail_msg "ops under --root: $output"
}

@test "deep path: with --root under a 1000-byte host prefix, getcwd names a cwd whose guest path fits though the host's does not" {
	local p
	p=$(printf 'p%.0s' {1..250})
	local root=$BATS_TEST_TMPDIR/$p/$p/$p/$p/root
	mkdir -p "$root/w"
	chmod -R o+rx "$BATS_TEST_TMPDIR/$p"
	chmod 0777 "$root/w"
	cp "$(guest deep_path)" "$root/deep_path"
	cd "$root/w"
	PVX_OPTS=(--rw --root "$root")
	pvx_run /deep_path ops
	assert_status 0
	# the guest's cwd is /w/deep + 30 x 201 bytes: getcwd fits again 20 levels down (7 + 20 x 201 < 4096), 10 up
	grep -qx 'getcwd again after 10 levels up: yes, length ok' <<<"$output" || fail_msg "$output"
	grep -qx 'removed all' <<<"$output" || fail_msg "$output"
}
