#!/usr/bin/env bats
# openat2(2) (issue 15): struct open_how's size and flag checks, every RESOLVE_ bit against "..", absolute and
# relative symlinks and the guest's /proc magic links, O_CREAT and O_TMPFILE under the scopes, a directory moved
# during a scoped walk. Static guest tests/guest/openat2.c, musl and glibc builds, compared with native runs.

load helpers

setup() {
	require_pvx
	W=$BATS_TEST_TMPDIR/work
	mkdir -p "$W"
	chmod 0777 "$W"	# as root, the guest's file access is nobody's (see helpers.bash)
	cd "$W"
	PVX_OPTS=(--rw)
}

@test "openat2 (hostile): open_how size 0/23/24/32/4096/4097/huge, nonzero tails, unaligned, bad pointers; flag checks" {
	compare_flavours 0 openat2 how
	has 'size 0: EINVAL' 'size 23: EINVAL' 'size 24: ok "A"' 'size 32, zero tail: ok "A"' 'size 4097: E2BIG' \
		'size SIZE_MAX: E2BIG' 'size 32, nonzero byte 31: E2BIG' 'size 4096, nonzero last byte: E2BIG' \
		'unaligned how: ok "A"' 'how NULL: EFAULT' 'how kernel address: EFAULT' \
		'how'"'"'s tail in an unmapped page: EFAULT' 'flags bit 40: EINVAL' 'resolve bit 0x40: EINVAL' \
		'BENEATH|IN_ROOT: EINVAL' 'mode without O_CREAT: EINVAL' 'O_PATH|O_RDWR: EINVAL' 'CACHED|O_CREAT: EAGAIN'
}

@test "openat2: RESOLVE_BENEATH, IN_ROOT, NO_SYMLINKS, NO_MAGICLINKS, NO_XDEV against .., symlinks and /proc" {
	compare_flavours 0 openat2 resolve
	has 'BENEATH ../f: EXDEV' 'IN_ROOT ../f: ok "A"' 'IN_ROOT up/f: ok "A"' 'BENEATH sub/up/f: EXDEV' \
		'IN_ROOT /f: ok "A"' 'IN_ROOT abs: ok "A"' 'NO_SYMLINKS self: ELOOP' 'IN_ROOT .. at the top: ok (dir)' \
		'NO_MAGICLINKS /proc/self/fd/N: ELOOP' 'NO_MAGICLINKS /proc/self/root/etc: ELOOP' \
		'NO_SYMLINKS /proc/self/status: ELOOP' 'NO_XDEV /proc/self/status: EXDEV' \
		'BENEATH abs->magic: EXDEV' 'NO_MAGICLINKS magic: ELOOP'
}

@test "openat2: O_CREAT and O_TMPFILE inside the scope only; a dangling symlink followed to create; O_TRUNC" {
	compare_flavours 0 openat2 create
	has 'BENEATH O_CREAT ../escape: EXDEV' 'inroot made in a: yes; escape made: no' \
		'NO_SYMLINKS O_CREAT dang: ELOOP' 'BENEATH O_CREAT dang->/dangabs: EXDEV' 'dangabs made in a: yes' \
		'BENEATH O_TMPFILE ..: EXDEV' 'BENEATH O_TRUNC f: ok; size now 0'
	[[ ! -e $W/t ]]
}

@test "openat2 (hostile): a thread moves the directory a RESOLVE_BENEATH/IN_ROOT walk goes .. through: no escape" {
	compare_flavours 0 openat2 race
	has 'race BENEATH: escapes 0, other results 0' 'race IN_ROOT: escapes 0, other results 0'
}

@test "openat2: O_CREAT and O_TMPFILE under a scope in a read-only root: EROFS" {
	PVX_OPTS=()
	pvx_run "$(guest openat2)" rofs
	assert_status 0
	assert_contains "$output" 'BENEATH O_CREAT in a read-only root: EROFS'
	assert_contains "$output" 'IN_ROOT O_TMPFILE in a read-only root: EROFS'
}

@test "openat2 (hostile): under --root, no walk of any RESOLVE_ kind reaches a file outside the root" {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/d"
	echo OUT >"$BATS_TEST_TMPDIR/f"
	echo IN >"$R/f"
	ln -s ../../f "$R/link"
	ln -s /f "$R/abslink"
	ln -s ../../f "$R/d/link"
	ln -s /../f "$R/d/abslink"
	cp "$(guest openat2)" "$R/openat2"
	PVX_OPTS=(--root "$R")
	pvx_run /openat2 root
	assert_status 0
	assert_contains "$output" 'IN_ROOT /../f from /: ok "IN"'
	assert_contains "$output" 'BENEATH ../f from /d: EXDEV'
	assert_contains "$output" 'plain ../../../../f from /: ok "IN"'
	! grep -q OUT <<<"$output"
	[[ $(grep -c 'ok "IN"' <<<"$output") -ge 20 ]]
}

@test "openat2 (hostile): a directory outside --root handed on fd 0 is no place to walk from, as for openat" {
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R" "$BATS_TEST_TMPDIR/outside"
	echo OUT >"$BATS_TEST_TMPDIR/outside/f"
	cp "$(guest openat2)" "$R/openat2"
	run timeout -k 5 "$PVX_TIMEOUT" "$PVX" run --platform="$PVX_PLATFORM" --root "$R" -- /openat2 fd0 <"$BATS_TEST_TMPDIR/outside"
	assert_status 0
	assert_contains "$output" 'BENEATH f from fd 0: EXDEV'
	assert_contains "$output" 'IN_ROOT f from fd 0: EXDEV'
	! grep -q OUT <<<"$output"
}
