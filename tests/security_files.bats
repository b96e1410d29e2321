#!/usr/bin/env bats
# Issue 11, the file side: every way a hostile guest reaches a host file meets one policy on the object
# actually opened (devices, terminals, read-only root, /sys), the staging directory is private, no host
# pid shows, setuid bits never reach the host, and root's file access is not the guest's by default.
# Device nodes are made by the tests (mknod, as root) in their own roots and only ever opened for reading.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
	G=$(guest sec_files)
}

teardown() {
	touch "$BATS_TEST_TMPDIR/done"	# releases a holdproc guest left behind by a failed assertion
}

require_root() {
	[[ $EUID == 0 ]] || skip "needs root (mknod, another identity)"
}

# make_root: R, a --root with the guest in it and device nodes made here: a block device (loop0's numbers),
# /dev/kmsg's, the console's and an allowed one (null).
make_root() {
	require_root
	R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R/dev" "$R/data"
	cp "$G" "$R/sec_files"
	mknod "$R/dev/disk" b 7 0
	mknod "$R/dev/kmsg" c 1 11
	mknod "$R/dev/console" c 5 1
	mknod "$R/dev/ptmx" c 5 2
	mknod "$R/dev/null" c 1 3
	chmod 666 "$R/dev/null"
	ln -s /dev/disk "$R/data/disk-link"
	echo inside >"$R/data/file"
}

in_root() {
	pvx_run_split "$@"
	echo "status=$status"$'\n'"$output"$'\n'"stderr: $PVX_STDERR_TEXT" >&2
}

# --- finding 1: O_PATH, then reopen ---

@test "an O_PATH fd of a block device is not reopened through /proc/self/fd, /dev/fd, /proc/PID/fd or /dev/stdin" {
	make_root
	for opts in "--root $R" "--root $R --rw" "--root $R --privileged"; do
		PVX_OPTS=($opts)
		in_root /sec_files reopen /dev/disk
		assert_status 0
		assert_contains "$output" "opath: ok blk"
		assert_not_contains "$output" "rdonly: ok"
		[[ $(grep -c ': EACCES$' <<<"$output") == 5 ]]
		assert_contains "$output" "proc path: ok blk"	# O_PATH again gives no access either
	done
}

@test "an O_PATH fd of a char device outside the list (kmsg) is not reopened; /dev/null is" {
	make_root
	PVX_OPTS=(--root "$R")
	in_root /sec_files reopen /dev/kmsg
	assert_not_contains "$output" "rdonly: ok"
	[[ $(grep -c ': EACCES$' <<<"$output") == 5 ]]
	in_root /sec_files reopenw /dev/null
	[[ $(grep -c ': ok chr$' <<<"$output") == 9 ]]
}

@test "a symlink to a device: open EACCES, O_NOFOLLOW ELOOP, its O_PATH fd not reopened" {
	make_root
	PVX_OPTS=(--root "$R" --rw)
	in_root /sec_files open /data/disk-link rdonly nonblock
	[[ $output == "/data/disk-link: EACCES" ]]
	in_root /sec_files open /data/disk-link rdonly nofollow
	[[ $output == "/data/disk-link: ELOOP" ]]
	in_root /sec_files reopen /data/disk-link
	assert_contains "$output" "opath: ok blk"
	assert_not_contains "$output" "rdonly: ok"
}

@test "a read-only file's O_PATH fd reopens for reading, never for writing, in a read-only root" {
	make_root
	PVX_OPTS=(--root "$R")
	in_root /sec_files reopenw /data/file
	assert_contains "$output" "proc rdonly: ok reg"
	assert_contains "$output" "proc wronly: EROFS"
	assert_contains "$output" "devfd rdwr: EROFS"
	[[ $(<"$R/data/file") == inside ]]
}

@test "reopening /proc/self/fd/N opens the file the guest holds, not what its name means now" {
	echo one >f && echo two >g
	run "$G" replaced f g	# natively (Linux's answer)
	[[ $output == "reopen reads: one" ]]
	echo one >f && echo two >g
	PVX_OPTS=(--rw)
	pvx_run "$G" replaced f g
	[[ $output == "reopen reads: one" ]]
}

@test "execveat of an fd: AT_EMPTY_PATH runs the file the guest holds; a device's fd is refused" {
	compare_native_status 0 "$G" execfd "$G"
	grep -qx '/: ok dir' "$sandbox_out"
	make_root
	PVX_OPTS=(--root "$R")
	in_root /sec_files execfd /dev/disk
	[[ $output == "execveat: EACCES" ]]
}

# --- finding 2: terminals ---

@test "/dev/console and /dev/ptmx do not exist for the guest (ENOENT), stat included" {
	make_root
	PVX_OPTS=(--root "$R")
	for dev in console ptmx; do
		in_root /sec_files open /dev/$dev rdonly nonblock
		[[ $output == "/dev/$dev: ENOENT" ]]
		in_root /sec_files open /dev/$dev path
		[[ $output == "/dev/$dev: ENOENT" ]]
	done
	PVX_OPTS=()
	pvx_run "$G" open /dev/ptmx rdwr nonblock
	[[ $output == "/dev/ptmx: ENOENT" ]]
}

@test "another pseudo-terminal (one the test holds) cannot be opened by its name" {
	command -v script >/dev/null || skip "script(1) not installed"
	require_root	# as another user the pty would be EACCES anyway
	local name=$BATS_TEST_TMPDIR/ttyname
	script -qfec "tty >'$name'; sleep 20" /dev/null </dev/null >/dev/null 2>&1 &
	local spid=$!
	for _ in $(seq 50); do [[ -s $name ]] && break; sleep 0.1; done
	local tty
	tty=$(<"$name")
	[[ $tty == /dev/pts/* ]]
	for opts in "" "--privileged"; do
		PVX_OPTS=($opts)
		pvx_run "$G" open "$tty" rdwr nonblock
		echo "$opts: $output" >&2
		[[ $output == "$tty: ENOENT" ]]
		pvx_run "$G" reopen "$tty"
		[[ $output == "opath: ENOENT" ]]
	done
	kill "$spid" 2>/dev/null || true
}

@test "the terminal pvx was given stays the guest's: by name, as /dev/tty and reopened as /dev/stdin" {
	command -v script >/dev/null || skip "script(1) not installed"
	run script -qec "'$PVX' run --platform=$PVX_PLATFORM -- '$G' open \$(tty) rdwr nonblock;
		'$PVX' run --platform=$PVX_PLATFORM -- '$G' open /dev/tty rdwr nonblock;
		'$PVX' run --platform=$PVX_PLATFORM -- '$G' open /dev/stdin rdonly nonblock" /dev/null </dev/null
	echo "$output" >&2
	[[ $(grep -c ': ok chr' <<<"$output") == 3 ]]
}

# --- finding 6: the check is made on the object opened ---

@test "a name swapped between a regular file and a device while the guest opens it never gives the device" {
	require_root
	make_root
	echo regular >"$R/target"
	mknod "$R/other" b 7 0
	(cd "$R" && exec "$G" swap target other 6) &
	local swapper=$!
	PVX_OPTS=(--root "$R" --rw)
	in_root /sec_files race /target 5
	wait "$swapper"
	assert_status 0
	assert_contains "$output" "regular opens: some"
	assert_contains "$output" "device opens: 0"
}

# --- finding 7: the staging directory ---

@test "the /proc staging directory is private (0700, a random name, no pid) and gone after exit" {
	"$PVX" run --platform="$PVX_PLATFORM" -- "$G" holdproc "$PWD/done" >hold.out 2>hold.err &
	local pid=$! stage="" f
	for _ in $(seq 300); do grep -q '^cwd:' hold.out 2>/dev/null && break; sleep 0.1; done
	for f in /proc/$pid/fd/*; do
		local l
		l=$(readlink "$f" 2>/dev/null) || continue
		if [[ $l == /tmp/pvx* || $l == /dev/shm/pvx* ]]; then stage=${l%%/[0-9]*/proc*}; fi
	done
	echo "pid=$pid stage=$stage" >&2
	cat hold.out >&2
	[[ -n $stage ]]
	[[ $stage != *"$pid"* ]]
	[[ $(stat -c %a "$stage") == 700 ]]
	[[ ! -e /tmp/pvx-proc-$pid ]]
	grep -qx 'proc fd: /proc' hold.out
	grep -qx 'cwd: /proc/1/fd' hold.out
	touch done
	wait "$pid"
	[[ ! -e $stage ]]
}

@test "listing /proc 1000 times leaves at most a few hundred staged directories; held ones keep working" {
	"$PVX" run --platform="$PVX_PLATFORM" -- "$G" listproc 1000 "$PWD/done" >hold.out 2>hold.err &
	local pid=$! stage="" f
	for _ in $(seq 600); do grep -q '^listed\|^listing' hold.out 2>/dev/null && break; sleep 0.1; done
	cat hold.out hold.err >&2
	grep -qx 'listed 1000' hold.out
	for f in /proc/$pid/fd/*; do
		local l
		l=$(readlink "$f" 2>/dev/null) || continue
		if [[ $l == /tmp/pvx* || $l == /dev/shm/pvx* ]]; then stage=${l%%/[0-9]*/proc*}; fi
	done
	local n
	n=$(find "$stage" -mindepth 1 -maxdepth 1 | wc -l)
	echo "stage=$stage listings=$n" >&2
	(( n > 0 && n <= 300 ))
	touch done
	wait "$pid"
	cat hold.out >&2
	grep -qx 'held /proc lists: yes' hold.out
	grep -qx 'cwd lists: yes, getcwd: /proc/1/fd' hold.out
}

# --- finding 9: O_TMPFILE ---

@test "O_TMPFILE in a read-only root is EROFS; with --rw it works" {
	pvx_run "$G" tmpfile /tmp
	[[ $output == "tmpfile: EROFS" ]]
	mkdir -p tmproot/t
	chmod 0777 tmproot/t
	PVX_OPTS=(--root "$BATS_TEST_TMPDIR/tmproot")
	cp "$G" tmproot/g
	pvx_run /g tmpfile /t
	[[ $output == "tmpfile: EROFS" ]]
	PVX_OPTS=(--root "$BATS_TEST_TMPDIR/tmproot" --rw)
	pvx_run /g tmpfile /t
	[[ $output == "tmpfile: ok, write ok" ]]
	[[ -z $(ls -A tmproot/t) ]]
}

# --- finding 10: host pids ---

@test "/sys is hidden (cgroups, kernel) but the CPU lists programs read" {
	for p in /sys/fs/cgroup /sys/kernel /sys/class /sys/fs; do
		pvx_run "$G" open "$p" rdonly directory
		[[ $output == "$p: ENOENT" ]]
		pvx_run "$G" open "$p" path
		[[ $output == "$p: ENOENT" ]]
	done
	pvx_run "$G" open /sys rdonly directory
	[[ $output == "/sys: EACCES" ]]
	pvx_run "$G" open /sys/devices/system/cpu path
	[[ $output == "/sys/devices/system/cpu: ok dir" ]]
	local f
	for f in online possible present; do
		[[ -r /sys/devices/system/cpu/$f ]] || continue
		compare_native_status 0 "$BUSYBOX" cat /sys/devices/system/cpu/$f
	done
	pvx_run "$G" open /sys/devices/system/cpu/online wronly
	[[ $output == "/sys/devices/system/cpu/online: EACCES" ]]
}

@test "no host pid through /proc/loadavg, /proc/self/fd links or getcwd in /proc" {
	require_prog "$BUSYBOX"
	pvx_run "$BUSYBOX" cat /proc/loadavg
	assert_status 0
	[[ ${output##* } == 1 ]]
	pvx_run "$G" readlink /proc/self /proc/self/cwd
	[[ ${lines[0]} == "/proc/self -> 1" ]]
}

# --- finding 13: privileges ---

@test "as root on the host's /: the guest's file access is nobody's (/etc/shadow EACCES); --privileged restores root's" {
	require_root
	[[ -e /etc/shadow ]] || skip "no /etc/shadow"
	pvx_run "$G" cat /etc/shadow
	[[ $output == "/etc/shadow: EACCES" ]]
	pvx_run "$G" ids
	[[ $output == "uid=65534 euid=65534 gid=65534 egid=65534 fsuid=65534 groups=0" ]]
	PVX_OPTS=(--privileged)
	pvx_run "$G" cat /etc/shadow
	assert_contains "$output" "/etc/shadow: read"
	# fork (mm/fork.c reads the stub's pagemap as root) and exec still work as nobody
	PVX_OPTS=()
	pvx_run "$BUSYBOX" sh -c 'x=$(busybox echo forked); echo $x; busybox cat /etc/shadow'
	assert_contains "$output" "forked"
	assert_contains "$output" "Permission denied"
}

@test "as root on the host's / with --rw: what the guest creates is nobody's" {
	require_root
	mkdir w && chmod 0777 w
	PVX_OPTS=(--rw)
	pvx_run "$BUSYBOX" sh -c "echo x > $PWD/w/f && mkdir $PWD/w/d"
	assert_status 0
	[[ $(stat -c %u:%g w/f w/d | sort -u) == 65534:65534 ]]
	mkdir rootonly && chmod 0755 rootonly
	pvx_run "$BUSYBOX" sh -c "echo x > $PWD/rootonly/f"
	[[ $status != 0 && ! -e rootonly/f ]]
}

@test "--root DIR as root keeps root's file access inside DIR" {
	make_root
	chmod 0600 "$R/data/file"
	PVX_OPTS=(--root "$R")
	in_root /sec_files cat /data/file
	[[ $output == "/data/file: read 7 bytes" ]]
}

@test "setuid and setgid bits never reach the host: chmod, fchmod, open, mkdir, mknod, O_TMPFILE" {
	local dirs=(d1)
	mkdir d1 && chmod 0777 d1
	PVX_OPTS=(--rw)
	pvx_run "$G" modes "$PWD/d1"
	assert_status 0
	assert_contains "$output" "chmod 04755: ok"
	assert_contains "$output" "tmpfile after: 755"
	if [[ $EUID == 0 ]]; then
		make_root
		mkdir "$R/d2" d3
		PVX_OPTS=(--root "$R" --rw)
		in_root /sec_files modes /d2
		assert_status 0
		PVX_OPTS=(--rw --privileged)
		pvx_run "$G" modes "$PWD/d3"
		assert_status 0
		pvx_run "$BUSYBOX" sh -c "cd $PWD/d3 && busybox cp $BUSYBOX suid && busybox chmod 4755 suid && busybox chmod g+s suid"
		assert_status 0
		dirs+=("$R/d2" d3)
	fi
	find "${dirs[@]}" -perm /6000 -printf 'has setuid/setgid: %m %p\n' >&2
	[[ -z $(find "${dirs[@]}" -perm /6000) ]]
	[[ $(find "${dirs[@]}" -name creat | wc -l) == ${#dirs[@]} ]]
}

# --- hostile inputs ---

@test "/proc/self/fd/NAME: signs, leading zeros, spaces and huge numbers are ENOENT, as on Linux" {
	compare_native_status 0 "$G" fdname 0 4294967296 18446744073709551616 99999999999999999999 -0 +0 00 " 0" 0x0 \
		1024 2147483648 01 4294967297 "" 0a
	grep -qx '0: ok chr' "$sandbox_out" || grep -qx '0: ok reg' "$sandbox_out"
	grep -qx '4294967296: ENOENT' "$sandbox_out"
	compare_native_status 0 "$G" readlink /proc/self/fd/4294967296 /proc/self/fd/00 /proc/self/fd/+0 /proc/self/fd/-1
	grep -qx '/proc/self/fd/4294967296 -> ENOENT' "$sandbox_out"
}

@test "bad pointers to open, openat, O_PATH and execveat are EFAULT" {
	compare_native_status 0 "$G" badptr
	[[ $(grep -c 'EFAULT$' "$sandbox_out") == 7 ]]
}

@test "O_PATH with O_CREAT or O_TMPFILE creates nothing; trailing slashes; O_CREAT through a dangling symlink" {
	mkdir -p w/dir && chmod -R 0777 w && echo data >w/file && ln -s created w/dangling && ln -s /dev/null w/null-link
	cd w
	PVX_OPTS=(--rw)
	local args=(
		"newfile path creat" "newfile path creat excl" "dir path tmpfile rdwr" "file/ rdonly" "dir/ rdonly"
		"missing/ creat wronly" "dir/ creat wronly" "dir creat rdonly" "file creat excl wronly"
		"dangling creat excl wronly" "dangling nofollow rdonly" "dangling path nofollow" "dir tmpfile rdonly"
		"dir/x creat directory rdonly" "null-link creat excl wronly" "null-link wronly trunc")
	local a
	for a in "${args[@]}"; do
		# shellcheck disable=SC2086
		compare_native_status 0 "$G" open $a
	done
	[[ ! -e newfile && ! -e created ]]
	# O_CREAT follows a dangling symlink and creates its target (inside the root)
	pvx_run "$G" open dangling creat wronly
	[[ $output == "dangling: ok reg" && -f created ]]
}
