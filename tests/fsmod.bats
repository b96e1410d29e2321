#!/usr/bin/env bats
# Syscalls that change the file system (mkdir, rename, link, symlink, chmod, chown, truncate, utimensat,
# statx, statfs, mknod, unlink, rmdir, umask): native vs sandbox with --rw, EROFS without it (in the
# order a read-only mount gives), and confinement of every change to --root.

load helpers
bats_require_minimum_version 1.5.0

teardown() {
	# a broken sandbox may have made these in the host's /: do not leave them behind
	if [[ -n ${N:-} ]]; then
		rmdir "/$N" "/$N.4" 2>/dev/null || true
		[[ -L /$N.5 ]] && rm -f "/$N.5"
	fi
	true
}

setup() {
	require_pvx
	T=$BATS_TEST_TMPDIR
	W=$T/work
	mkdir -p "$W"
	chmod 0777 "$W"	# as root, the guest's file access is nobody's (see helpers.bash)
	cd "$W"
}

# snapshot DIR: names, types, modes, sizes, mtimes and link targets of everything below DIR
snapshot() {
	(cd "$1" && find . -printf '%p %y %m %s %T@ %n %l\n' | LC_ALL=C sort)
}

@test "fsmod guest: native and sandbox --rw agree (musl and glibc)" {
	# natively as root (CI) chown and friends act with root's rights: so does --privileged
	PVX_OPTS=(--rw --root / --privileged)
	for g in fsmod fsmod.glibc; do
		compare_native_status 0 "$(guest $g)"
		# each run removed everything it made, or the second one would have refused to start
		[[ -z $(ls -A "$W") ]]
		grep -qx 'rename w/f w/f2 *= 0 OK' "$sandbox_out"
		grep -qx 'child umask 0027' "$sandbox_out"
		grep -qx '  w/f2 atime=1000000000.000000005 mtime=1234567890.000000600' "$sandbox_out"
		grep -qx '  w/symfollow *reg 0644 size=12 nlink=3' "$sandbox_out"
		grep -qx 'rmdir w/ *= 0 OK' "$sandbox_out"
	done
}

@test "the guest's umask: inherited from pvx, applied to open, mkdir and mknod" {
	require_prog "$BUSYBOX"
	PVX_OPTS=(--rw)
	umask 0007
	compare_native_status 0 "$BUSYBOX" sh -c 'umask; touch a; mkdir b; mkfifo c;
		umask 0222; touch d; mkdir e; stat -c "%n %a" a b c d e; rm -r a b c d e'
	[[ $(<"$sandbox_out") == $'0007\na 660\nb 770\nc 660\nd 444\ne 555' ]]
}

@test "busybox file changes: native and sandbox --rw agree" {
	require_prog "$BUSYBOX"
	PVX_OPTS=(--rw)
	compare_native_status 0 "$BUSYBOX" sh -c 'mkdir d && echo hi > d/f && mv d/f d/g && ln -s g d/l && cat d/l && rm -r d'
	[[ $(<"$sandbox_out") == hi ]]
	[[ ! -e d ]]
	compare_native_status 0 "$BUSYBOX" sh -c '
		mkdir -p a/b/c && touch a/f && echo 0123456789 > a/g
		chmod 640 a/f && chmod 0705 a/b && truncate -s 4 a/g && cat a/g; echo
		ln a/g a/hard && ln -s ../g a/b/sym && cp a/g a/b/c/copy && mv a/b/c a/moved
		touch -d @1234567890 a/f && stat -c "%n %a %s %h %Y" a/f && stat -c "%n %a %s %h" a/g a/b
		readlink a/b/sym && cat a/b/sym; echo
		mkfifo a/p && stat -c "%n %F" a/p
		find a | sort
		rmdir a/b 2>/dev/null || echo "rmdir a/b failed: not empty"
		rm a/b/sym && rmdir a/b && rm -r a && echo removed
		[ -e a ] || echo gone'
	grep -qx 'a/f 640 0 1 1234567890' "$sandbox_out"
	grep -qx 'a/moved/copy' "$sandbox_out"
	grep -qx gone "$sandbox_out"
	[[ -z $(ls -A "$W") ]]
}

@test "without --rw every change fails with EROFS and the directory is unchanged" {
	require_prog "$BUSYBOX"
	mkdir d e && echo data >f && echo in >d/inner && ln -s f l
	local before after
	before=$(snapshot "$W")
	for cmd in 'mkdir n' 'rm f' 'rm -r d' 'mv f g' 'chmod 600 f' 'chown 0:0 f' 'truncate -s 0 f' \
		'ln -s x s' 'ln f h' 'touch f' 'rmdir e' 'mkfifo p' 'echo x > n' 'echo x >> f'; do
		pvx_run "$BUSYBOX" sh -c "$cmd"
		if [[ $status == 0 || $output != *"Read-only file system"* ]]; then
			echo "'$cmd' in a read-only sandbox: status $status, output: $output" >&2
			return 1
		fi
	done
	pvx_run "$(guest fsmod)" ro
	assert_status 0
	assert_contains "$output" "unlink f                                     = -1 EROFS"
	assert_contains "$output" "mkdir d (exists)                             = -1 EEXIST"
	after=$(snapshot "$W")
	[[ $before == "$after" ]]
	# ... and the same commands work with --rw
	PVX_OPTS=(--rw)
	pvx_run "$BUSYBOX" sh -c 'mkdir n && mv f g && rmdir e'
	assert_status 0
	[[ -d n && -f g && ! -e f && ! -e e ]]
}

@test "without --rw errors come in the order of a real read-only mount" {
	[[ $(id -u) == 0 ]] && unshare -m true 2>/dev/null || skip "needs root for a read-only bind mount"
	local g
	g=$(guest fsmod)
	mkdir tree mnt
	(cd tree && mkdir d e && echo data >f && echo in >d/inner && ln -s f l)
	local before
	before=$(snapshot "$W/tree")
	unshare -m sh -c 'mount --bind tree mnt && mount -o remount,bind,ro mnt && cd mnt && exec "$1" ro' sh "$g" \
		>native.out 2>native.err
	grep -q 'EROFS' native.out	# the native run really was read-only
	cd tree
	pvx_run_split "$g" ro
	assert_status 0
	cd ..
	diff -u native.out "$PVX_STDOUT"
	[[ $before == "$(snapshot "$W/tree")" ]]
}

@test "mknod of devices and sockets is EPERM" {
	PVX_OPTS=(--rw)
	pvx_run "$(guest fsmod)" dev
	assert_status 0
	[[ $(grep -c '= -1 EPERM$' <<<"$output") == 3 ]]
	[[ -z $(ls -A "$W") ]]
}

@test "changes with --rw --root stay inside the root" {
	require_prog "$BUSYBOX"
	local B=$T/box R=$T/box/root
	# unique names for what would land in the host's / if an absolute symlink escaped
	N=pvx-fsmod-escape.$$
	mkdir -p "$R/bin" "$B/victim"
	cp "$BUSYBOX" "$R/bin/busybox"
	echo secret >"$B/marker"
	echo victim >"$B/victim/file"
	echo file >"$R/file"
	echo file2 >"$R/file2"
	echo file3 >"$R/file3"
	local before
	before=$(cd "$B" && find . -path ./root -prune -o -printf '%p %y %m %s %T@ %n\n' | LC_ALL=C sort)
	cd "$R"
	run "$PVX" run --platform="$PVX_PLATFORM" --rw --root "$R" -- /bin/busybox sh -c "
		busybox ln -s / esc; busybox mkdir esc/$N
		busybox mv file ../../outside
		busybox ln -s ../../.. up; busybox mv file2 up/escaped2
		busybox ln -s $B hostdir; busybox mkdir hostdir/evil; busybox touch hostdir/evil2
		busybox ln -s $B/victim vd; busybox rm -f vd/file; busybox rm -rf up/victim
		busybox ln -s $B/marker hm; busybox chmod 777 hm; busybox truncate -s 0 hm; busybox touch -d @1 hm
		busybox ln ../../marker hardmarker; busybox ln hm hardmarker2
		busybox mv file3 /proc/self/root$B/escaped3
		busybox mkdir /../../$N.4; busybox ln -s x /../../$N.5
		cd /; busybox mv ../outside ../../moved
		true"
	assert_status 0
	# what the guest did landed inside the root
	[[ -d $R/$N && -f $R/moved && -f $R/escaped2 && -L $R/$N.5 && -d $R/$N.4 ]]
	[[ $(<"$R/moved") == file ]]
	# and nothing outside it changed
	local after
	after=$(cd "$B" && find . -path ./root -prune -o -printf '%p %y %m %s %T@ %n\n' | LC_ALL=C sort)
	if [[ $before != "$after" ]]; then
		diff <(echo "$before") <(echo "$after") >&2
		return 1
	fi
	[[ $(<"$B/marker") == secret && $(<"$B/victim/file") == victim ]]
	[[ ! -e $T/outside && ! -e $T/escaped2 && ! -e /$N && ! -e /$N.4 && ! -e /$N.5 ]]
}

@test "xattrs: native and sandbox --rw agree on user. names, errors, bad pointers, O_PATH, pipes, /proc" {
	PVX_OPTS=(--rw)
	for g in xattr xattr.glibc; do
		rm -f xa xl
		compare_native_status 0 "$(guest $g)"
		grep -q '^listxattr  *user.pvx user.two$' "$sandbox_out"
		grep -q '^a bad value pointer  *EFAULT$' "$sandbox_out"
	done
}

@test "xattrs: security. and trusted. stay out of reach even with --privileged; read-only root is EROFS" {
	[[ $EUID == 0 ]] || skip "needs root to show what the host would allow"
	: >xa
	# natively root may write trusted. names (and the sentry could): the guest may not, nor read them
	if ! setfattr -n trusted.pvx -v host xa 2>/dev/null && ! python3 -c 'import os; os.setxattr("xa", "trusted.pvx", b"host")'; then
		skip "this file system takes no trusted. names"
	fi
	PVX_OPTS=(--rw --privileged)
	pvx_run "$(guest xattr)" priv
	echo "$output"
	assert_status 0
	grep -q '^setxattr security.capability  *EPERM$' <<<"$output"
	grep -q '^fsetxattr security.capability  *EPERM$' <<<"$output"
	grep -q '^setxattr trusted.pvx  *EPERM$' <<<"$output"
	grep -q '^removexattr trusted.pvx  *EPERM$' <<<"$output"
	grep -q '^getxattr trusted.pvx  *ENODATA$' <<<"$output"
	grep -q '^trusted. names listed  *0$' <<<"$output"
	python3 -c 'import os; assert os.getxattr("xa", "trusted.pvx") == b"host"; assert "security.capability" not in os.listxattr("xa")'
	# natively, the same guest as root sees the name (and then removes it)
	"$(guest xattr)" priv | grep -q '^trusted. names listed  *1$'
	python3 -c 'import os; os.setxattr("xa", "user.pvx", b"keep")'
	PVX_OPTS=()
	pvx_run "$(guest xattr)" ro
	echo "$output"
	grep -q '^setxattr in a read-only root  *EROFS$' <<<"$output"
	grep -q '^removexattr in a read-only root  *EROFS$' <<<"$output"
	grep -q '^getxattr in a read-only root  *4 keep$' <<<"$output"
	python3 -c 'import os; assert os.getxattr("xa", "user.pvx") == b"keep"'
}
