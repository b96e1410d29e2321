#!/usr/bin/env bats
# Issue 16, path calls at one host call: a stat, access, readlink or open is an openat2 inside the root and one
# statx, the file system type is asked once per mount (by its unique id) and /sys's readlink only for paths
# that could lead there. These are the hostile cases of that shortcut: a directory swapped for a symlink to "/"
# mid-walk, ".." above the root, /sys reached by every spelling and by symlinks, mounts replaced under a running
# sandbox (a tmpfs by the host's /proc or sysfs), and the host calls a stat costs.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
	G=$(guest path_race)
	# R: a --root inside T, with "secret" outside it (only an escape finds it) and "marker" inside.
	T=$BATS_TEST_TMPDIR
	R=$T/root
	mkdir -p "$R/bin" "$R/w"
	cp "$G" "$R/path_race"
	cp "$BUSYBOX" "$R/bin/busybox"
	echo secret >"$T/secret"
	mkdir -p "$T/secretdir"
	echo marker >"$R/marker"
	echo marker >"$R/w/marker"
	chmod -R a+rwX "$R"
}

# probe ARGS: path_race probe in R, read-only; one line per path in $output.
probe() {
	PVX_OPTS=(--root "$R")
	pvx_run_split /path_race probe "$@"
	echo "status=$status"$'\n'"$output"$'\n'"stderr: $PVX_STDERR_TEXT" >&2
	assert_status 0
}

@test "a directory swapped for a symlink to / or .. while another task walks through it never leads out of the root" {
	PVX_OPTS=(--root "$R" --rw)
	# The guest's cwd is /w: d/secret, d/../secret would be T/secret if ".." or "/" were the host's.
	pvx_run_split /bin/busybox sh -c 'cd /w && /path_race swap 1500'
	echo "status=$status"$'\n'"$output"$'\n'"stderr: $PVX_STDERR_TEXT" >&2
	assert_status 0
	assert_contains "$output" "secret found: 0"
	assert_contains "$output" "saw the directory: yes"
	assert_contains "$output" "saw the symlink: yes"	# the race was run, not missed
}

@test "\"..\" above the root, from / and from a directory, stays at the root for stat, lstat, access, open, readlink" {
	probe /../secret /../../../secret ../secret /w/../../secret /marker/.. /../marker /w/../../../marker
	assert_contains "$output" "/../secret: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT readlink=ENOENT"
	assert_contains "$output" "/../../../secret: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "../secret: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "/w/../../secret: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT"
	assert_contains "$output" "/marker/..: stat=ENOTDIR"
	assert_contains "$output" "/../marker: stat=ok lstat=ok access=ok open=ok opath=ok readlink=EINVAL"
	assert_contains "$output" "/w/../../../marker: stat=ok lstat=ok access=ok open=ok"
}

@test "a root's own /sys stays hidden by every spelling, by .. and through symlinks; names that only start with sys do not" {
	mkdir -p "$R/sys/devices" "$R/sysx" "$R/x"
	echo s >"$R/sys/hidden"
	echo v >"$R/sysx/a"
	echo v >"$R/sys.d"
	ln -s sys "$R/link"
	ln -s /sys/hidden "$R/flink"
	ln -s ../sys "$R/x/up"
	chmod -R a+rwX "$R"
	probe /sys/hidden //sys/hidden /./sys/hidden /x/../sys/hidden x/../sys/hidden /link/hidden /x/up/hidden \
		/flink /sys/devices /x/../sys/devices /sysx/a /sys.d /./sysx/a
	for p in /sys/hidden //sys/hidden /./sys/hidden /x/../sys/hidden x/../sys/hidden /link/hidden /x/up/hidden; do
		assert_contains "$output" "$p: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT readlink=ENOENT"
	done
	assert_contains "$output" "/flink: stat=ENOENT lstat=ok access=ENOENT open=ENOENT opath=ENOENT readlink=ok"
	# the directories on the way to /sys/devices/system/cpu/online: found, not listed
	assert_contains "$output" "/sys/devices: stat=ok lstat=ok access=ok open=EACCES opath=ok"
	assert_contains "$output" "/x/../sys/devices: stat=ok lstat=ok access=ok open=EACCES opath=ok"
	assert_contains "$output" "/sysx/a: stat=ok lstat=ok access=ok open=ok opath=ok readlink=EINVAL"
	assert_contains "$output" "/sys.d: stat=ok lstat=ok access=ok open=ok opath=ok readlink=EINVAL"
	assert_contains "$output" "/./sysx/a: stat=ok lstat=ok access=ok open=ok"
}

@test "one name from the cwd or a directory fd (a stat's one-statx lookup) hides /sys as the full lookup does; /proc and /dev stay the sentry's" {
	mkdir -p "$R/sys/devices" "$R/sysx" "$R/dev"
	echo s >"$R/sys/hidden"
	echo v >"$R/sysx/a"
	chmod -R a+rwX "$R"
	PVX_OPTS=(--root "$R")
	pvx_run_split /bin/busybox sh -c 'cd / && /path_race probe sys sysx proc marker; cd /sys && /path_race probe hidden devices;
		cd /sysx && /path_race probe a; cd /dev && /path_race probe null fd; cd /proc && /path_race probe self version'
	echo "status=$status"$'\n'"$output"$'\n'"stderr: $PVX_STDERR_TEXT" >&2
	assert_status 0
	assert_contains "$output" "sys: stat=ok lstat=ok access=ok open=EACCES opath=ok"
	assert_contains "$output" "sysx: stat=ok lstat=ok access=ok open=ok"
	assert_contains "$output" "proc: stat=ok lstat=ok access=ok open=ok"
	assert_contains "$output" "marker: stat=ok lstat=ok access=ok open=ok opath=ok readlink=EINVAL"
	assert_contains "$output" "hidden: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "devices: stat=ok lstat=ok access=ok open=EACCES opath=ok"
	assert_contains "$output" "a: stat=ok lstat=ok access=ok open=ok"
	# a bare root's /dev: the standard devices are the host's, /dev/fd the guest's own fds
	assert_contains "$output" "null: stat=ok lstat=ok access=ok open=ok"
	assert_contains "$output" "fd: stat=ok"
	assert_contains "$output" "self: stat=ok"
	assert_contains "$output" "version: stat=ok lstat=ok access=ok open=ok"
}

@test "the host's /sys and /proc reached through a symlink or .. from the host's root are still hidden" {
	[[ -d /sys/kernel && -e /proc/version ]] || skip "no host /sys or /proc"
	ln -s /sys "$T/syslink"
	ln -s /proc "$T/proclink"
	chmod o+rx "$T"
	PVX_OPTS=()
	pvx_run_split "$G" probe "$T/syslink/kernel" /usr/../sys/kernel "$T/proclink/version" /usr/../sys/devices/system/cpu/online
	echo "status=$status"$'\n'"$output"$'\n'"stderr: $PVX_STDERR_TEXT" >&2
	assert_status 0
	assert_contains "$output" "$T/syslink/kernel: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "/usr/../sys/kernel: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	# the guest's /proc is pvx's own: the host's, by another name, is not there
	assert_contains "$output" "$T/proclink/version: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "/usr/../sys/devices/system/cpu/online: stat=ok lstat=ok access=ok open=ok"
}

# mount_swap: run in a private mount namespace (as root): mount over R/m while a sandbox runs in R and probes
# it between the host's changes (a file in the root says when).
@test "a mount replaced under a running sandbox is judged anew: tmpfs, then /proc, then sysfs, then tmpfs; a device bound over a file" {
	[[ $EUID == 0 ]] || skip "needs root (mounts in a private mount namespace)"
	command -v unshare >/dev/null || skip "no unshare"
	unshare -m true 2>/dev/null || skip "unshare -m not permitted here"
	mkdir -p "$R/m"
	echo plain >"$R/kf"
	chmod -R a+rwX "$R"
	cat >"$T/swap.sh" <<-'EOF'
		set -e
		R=$1
		shift
		mount --make-rprivate /
		wait_for() { for _ in $(seq 200); do [ -e "$R/$1" ] && return; sleep 0.05; done; echo "no $1" >&2; exit 1; }
		mount -t tmpfs -o mode=0755 tmpfs "$R/m"
		echo visible >"$R/m/f"
		"$@" /bin/busybox sh -c '
			p() { /path_race probe "$@"; }
			w() { touch /ready$1; while [ ! -e /go$1 ]; do sleep 0.05; done; }
			p /m/f /kf; w 1; p /m/version /m/self; w 2; p /m/kernel /m/devices; w 3; p /m/f /kf' &
		wait_for ready1
		umount "$R/m"; mount -t proc proc "$R/m"; touch "$R/go1"
		wait_for ready2
		umount "$R/m"; mount -t sysfs sysfs "$R/m"; touch "$R/go2"
		wait_for ready3
		umount "$R/m"; mount -t tmpfs -o mode=0755 tmpfs "$R/m"; echo again >"$R/m/f"
		mount --bind /dev/kmsg "$R/kf"
		touch "$R/go3"
		wait
	EOF
	run timeout -k 5 120 unshare -m bash "$T/swap.sh" "$R" "$PVX" run --platform="$PVX_PLATFORM" --root "$R" --rw --
	echo "status=$status"$'\n'"$output" >&2
	assert_status 0
	[[ $(grep -c '^/m/f: stat=ok lstat=ok access=ok open=ok' <<<"$output") == 2 ]]
	assert_contains "$output" "/kf: stat=ok lstat=ok access=ok open=ok opath=ok"
	assert_contains "$output" "/m/version: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "/m/self: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "/m/kernel: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	assert_contains "$output" "/m/devices: stat=ENOENT lstat=ENOENT access=ENOENT open=ENOENT opath=ENOENT"
	# /dev/kmsg bound over a file: a character device the policy refuses to open (found, not opened)
	assert_contains "$output" "/kf: stat=ok lstat=ok access=ok open=EACCES opath=ok"
}

@test "a guest stat costs no readlink of /proc/self/fd and, with unique mount ids (Linux 6.8), no fstatfs on the host" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "strace -f of the sandbox: the ptrace platform's stubs are pvx's to trace"
	command -v strace >/dev/null || skip "strace not installed"
	local n=400
	run timeout -k 5 120 strace -f -qq -e trace=readlink,fstatfs -o "$T/trace" "$PVX" run --platform=seccomp -- \
		"$G" statloop /usr/bin "$n"
	assert_status 0
	assert_contains "$output" "$n"
	local readlinks fstatfs
	readlinks=$(grep -c 'readlink(' "$T/trace" || true)
	fstatfs=$(grep -c 'fstatfs(' "$T/trace" || true)
	echo "readlink: $readlinks fstatfs: $fstatfs for $n stats" >&2
	((readlinks < n / 4))
	local major minor
	IFS=. read -r major minor _ <<<"$(uname -r)"
	if ((major > 6 || (major == 6 && minor >= 8))); then
		((fstatfs < n / 4))
	fi
}

# The tree errnos probes, in the current directory: a file, a directory, symlinks (to each, dangling, a loop,
# absolute), a directory nobody may search, names and paths too long.
errno_tree() {
	mkdir -p d locked
	echo f >f
	: >d/a
	: >locked/x
	ln -s f ln
	ln -s d lnd
	ln -s nowhere dangling
	ln -s loop loop
	ln -s "$PWD/d" absd
	chmod 0 locked
	chmod -R a+rX d f
	LONGNAME=$(printf 'n%.0s' {1..300})
	LONGPATH=$(printf 'd/%.0s' {1..2100})a
}

@test "every path call agrees with Linux on a file, a directory, symlinks and their errnos (ENOENT, ENOTDIR, ELOOP, EACCES, ENAMETOOLONG, trailing slash, AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW, dirfds)" {
	mkdir "$T/e" && cd "$T/e"
	errno_tree
	chmod -R a+rwX "$T/e" && chmod 0 locked
	local paths=(f f/ f/x d d/ d/a d/../f ln ln/ lnd lnd/ lnd/a dangling dangling/ loop loop/x absd/a locked locked/x
		nonexistent nonexistent/x "" . .. "$LONGNAME" "d/$LONGNAME" "$LONGPATH")
	# natively with nobody's file access when root, as pvx gives the guest (helpers.bash)
	local as=()
	[[ $EUID != 0 ]] || as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	"${as[@]}" "$G" errnos "${paths[@]}" >"$T/native.out"
	PVX_OPTS=()
	pvx_run_split "$G" errnos "${paths[@]}"
	echo "$PVX_STDERR_TEXT" >&2
	assert_status 0
	diff -u "$T/native.out" "$PVX_STDOUT"
	# the comparison is not vacuous: the cases give the errnos they are there for
	local want
	for want in "f/: stat=ENOTDIR" "loop: stat=ELOOP lstat=ok" "locked/x: stat=EACCES" "nnnnnnnn: stat=ENAMETOOLONG" \
		"locked: stat=ok lstat=ok fstatat=ok fstatat_nofollow=ok statx=ok statx_nofollow=ok access=EACCES" \
		"lnd/: stat=ok lstat=ok" \
		"ln: stat=ok lstat=ok fstatat=ok fstatat_nofollow=ok statx=ok statx_nofollow=ok access=ok faccessat2_nofollow=ok readlink=ok readlinkat=ok open=ok opendir=ENOTDIR opendir_nofollow=ENOTDIR" \
		"d: stat=ok lstat=ok fstatat=ok fstatat_nofollow=ok statx=ok statx_nofollow=ok access=ok faccessat2_nofollow=ok readlink=EINVAL readlinkat=EINVAL open=ok opendir=ok getdents=ok" \
		"fds: fstatat_file_x=ENOTDIR fstatat_file_empty=ok fstatat_file_empty_noflag=ENOENT" \
		"fstatat_link_a=ENOTDIR openat_link_a=ENOTDIR readlinkat_link_empty=ok"; do
		assert_contains "$output" "$want"
	done
}

@test "host calls per guest path call: a read-only directory open is one openat2 and one statx, a stat of one name from a directory fd one statx" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "strace -f of the sandbox: the ptrace platform's stubs are pvx's to trace"
	command -v strace >/dev/null || skip "strace not installed"
	local n=300 call
	for call in opendir fstatat; do
		run timeout -k 5 120 strace -f -qq -e trace=openat,open,openat2,newfstatat,fstat,close,readlink -o "$T/trace.$call" \
			"$PVX" run --platform=seccomp -- "$G" callloop "$call" /usr/include "$n"
		assert_status 0
		assert_contains "$output" "$n"
	done
	# the guest's own calls are in the trace too (its open, fstatat and close): count the sentry's by what it asks
	local reopens fstats
	reopens=$(grep -c 'openat(AT_FDCWD, "/proc/self/fd/' "$T/trace.opendir" || true)
	fstats=$(grep -c 'newfstatat([0-9]*, "", ' "$T/trace.fstatat" || true)
	# a plain name from a directory fd is one statx in the directory's host fd: no openat2, no close
	local lookups
	lookups=$(grep -c 'openat2(' "$T/trace.fstatat" || true)
	echo "reopens: $reopens for $n directory opens, fstat: $fstats, openat2: $lookups for $n fstatat" >&2
	((reopens < n / 4))
	((fstats < n / 4))
	((lookups < n / 4))
}

@test "paths and xattr names at the edges of guest memory (NULL, page ends, PROT_NONE, unmapped, past the stub's copy, past PATH_MAX) fail or succeed as natively" {
	# On seccomp the stub copies a path call's path in the guest's own context first (the path prefetch);
	# a fault there must end as the sentry's own read would. Both builds, each against its own native run.
	mkdir w && chmod 777 w
	PVX_OPTS=(--rw)
	local f
	for f in "" .glibc; do
		compare_native "$(guest pathpf$f)" "$PWD/w" || return 1
		[[ $native_status == 0 ]]
		grep -q '^NULL stat: Bad address$' "$native_out"
		grep -q '^nul at page end stat: ok$' "$native_out"
	done
}

# few_host_calls SYSCALL CALL...: callloop of each CALL, n times on seccomp under strace -f: fewer than n/4
# SYSCALLs in the whole sandbox (the stub's own copies replaced the sentry's)
few_host_calls() {
	command -v strace >/dev/null || skip "strace not installed"
	local sc=$1 n=300 call count
	shift
	for call in "$@"; do
		run timeout -k 5 120 strace -f -qq -e trace="$sc" -o "$T/trace.$call" \
			"$PVX" run --platform=seccomp -- "$G" callloop "$call" /usr/include "$n"
		assert_status 0
		assert_contains "$output" "$n"
		count=$(grep -c "$sc(" "$T/trace.$call" || true)
		echo "$call: $count $sc for $n calls" >&2
		((count < n / 4))
	done
}

@test "a guest path call's path is read by the stub: no process_vm_readv of the sentry per call" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "the path prefetch is the seccomp stub's"
	# getxattr and lgetxattr have two strings (the path and the name): the stub copies both
	few_host_calls process_vm_readv stat lstat statx access faccessat2 open fstatat getxattr lgetxattr
}

@test "a stat's result lands as natively: bad buffers, untouched stack pages, signals in between, a tracer at the exit stop" {
	# On seccomp the stub writes a stat's struct as the guest resumes (copy_to_guest_ret); a fault there is
	# the sentry's to redo (a stack grows) or to answer with EFAULT, and a signal, a stop or a tracer between
	# the call and the guest's code makes the sentry write it first. Both builds, each against native.
	local f m
	for f in "" .glibc; do
		for m in edges signals traced; do
			compare_native "$(guest statout$f)" "$m" || return 1
			[[ $native_status == 0 ]]
			[[ $m != edges ]] || grep -q '^untouched stack stat, ino right: 1$' "$sandbox_out"
			[[ $m != traced ]] || grep -q '^traced: 200 exit stops, 200 with the result in place$' "$sandbox_out"
		done
	done
}

@test "a guest stat's result is written by the stub: no process_vm_writev of the sentry per call" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "the copy-out on the way back is the seccomp stub's"
	few_host_calls process_vm_writev stat lstat statx fstatat
}

@test "input buffers at the edges of guest memory (write data, sigsets, sigactions, pollfds, timespecs, iovecs) fail or succeed as natively" {
	# On seccomp the stub copies a syscall's input buffer at the trap (the input prefetch); a fault there must
	# end as the sentry's own read would, a count past the stub's copy must still be read whole, and the input
	# of a call that writes its output over it is the one before. Both builds, each against its own native run.
	mkdir w && chmod 777 w
	PVX_OPTS=(--rw)
	local f
	for f in "" .glibc; do
		compare_native "$(guest inpf$f)" edges "$PWD/w" || return 1
		[[ $native_status == 0 ]]
		grep -q '^NULL poll: Bad address$' "$native_out"
		grep -q '^ends at page end sigaction: ok$' "$native_out"
		grep -q '^big 12273: 12273$' "$native_out"
	done
}

@test "a guest's small write, sigprocmask, sigaction, poll, epoll_ctl and nanosleep are read by the stub: no process_vm_readv of the sentry per call" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "the input prefetch is the seccomp stub's"
	command -v strace >/dev/null || skip "strace not installed"
	local n=300 call count
	for call in write pwrite sigprocmask sigaction poll epoll_ctl nanosleep writev; do
		run timeout -k 5 120 strace -f -qq -e trace=process_vm_readv -o "$T/trace.$call" \
			"$PVX" run --platform=seccomp -- "$(guest inpf)" loop "$call" "$n"
		assert_status 0
		assert_contains "$output" "$n"
		count=$(grep -c "process_vm_readv(" "$T/trace.$call" || true)
		echo "$call: $count process_vm_readv for $n calls" >&2
		# writev: its iovec array is the stub's copy, the data it names the sentry's read
		if [[ $call == writev ]]; then ((count < n + n / 4)); else ((count < n / 4)); fi
	done
}

# The directory cache (sentry/fs/dcache.c): a stat of /a/b/name is one statx of name in a kept fd of /a/b,
# answered only if no kept directory (or one above it) was renamed, removed or changed meanwhile, and no mount.
# It starts after PVX_DCACHE_AFTER lookups it could serve (4096): these tests start it at once. A sentry thread asks
# its own io_uring instead of an epoll_wait after PVX_DCACHE_RING_AFTER (256) lookups; RING_AFTER=0 sets that to 0.

# stepped_run GUEST HOST [WRAPPER...]: a sandbox in R (--rw, under WRAPPER, e.g. unshare -m) runs the busybox sh
# commands GUEST, with p PATH... (path_race probe) and w N (touch /readyN, wait for /goN), while a bash runs the
# commands HOST with R, T and wait_for NAME (until R/NAME is there), as mount_swap does; the output in $output.
stepped_run() {
	local guest=$1 host=$2
	shift 2
	cat >"$T/steps.sh" <<-EOF
		set -e
		R=\$1 T=\$2
		shift 2
		wait_for() { for _ in \$(seq 400); do [ -e "\$R/\$1" ] && return; sleep 0.05; done; echo "no \$1" >&2; exit 1; }
		"\$@" /bin/busybox sh -c 'p() { /path_race probe "\$@"; }
			w() { touch /ready\$1; while [ ! -e /go\$1 ]; do sleep 0.05; done; }
			$guest' &
		$host
		wait
	EOF
	PVX_DCACHE_AFTER=0 PVX_DCACHE_RING_AFTER="${RING_AFTER-}" run timeout -k 5 120 "$@" bash "$T/steps.sh" "$R" "$T" "$PVX" run --platform="$PVX_PLATFORM" --root "$R" --rw --
	echo "status=$status"$'\n'"$output" >&2
	assert_status 0
}

# cached_probes [one]: the guest probes R/c between the host's (and its own) changes; one "PATH: stat=... lstat=..."
# line per probe, in order, in $T/probes, which must be what a walk of each path at that moment finds. A probe process each time, or with "one" one process for all the host's
# changes (its sentry thread keeps its ring across them).
cached_probes() {
	local guest='p /c/d/one /c/d/two; w 1; p /c/d/one /c/d/two; w 2; p /c/d/two /c/d/three; w 3
		p /c/d/three /c/d/four; w 4; p /c/d/four; w 5; p /c/d/five'
	[[ ${1-} == one ]] && guest='p /c/d/one /c/d/two @1 /c/d/one /c/d/two @2 /c/d/two /c/d/three @3 /c/d/three /c/d/four @4 /c/d/four @5 /c/d/five'
	mkdir -p "$R/c/d" "$R/c/e" "$T/out"
	touch "$R/c/d/one" "$R/c/e/two"
	chmod -R a+rwX "$R"
	stepped_run "$guest"'; mv /c/d /c/g; mkdir /c/d; p /c/d/five /c/g/five' '
		# the kept directory renamed and another put under its name
		wait_for ready1; mv "$R/c/d" "$R/c/old"; mv "$R/c/e" "$R/c/d"; touch "$R/go1"
		# the directory above it renamed, and a new tree made under the old names
		wait_for ready2; mv "$R/c" "$R/c2"; mkdir -p "$R/c/d"; touch "$R/c/d/three"; chmod -R a+rwX "$R/c"; touch "$R/go2"
		# removed and made again
		wait_for ready3; rm -r "$R/c/d"; mkdir "$R/c/d"; touch "$R/c/d/four"; chmod a+rwX "$R/c/d"; touch "$R/go3"
		# moved out of the root: what is in it is not the guest'"'"'s any more
		wait_for ready4; mv "$R/c/d" "$T/out/d"; mkdir "$R/c/d"; chmod a+rwX "$R/c/d"; touch "$R/go4"
		# then the guest'"'"'s own rename (through the sentry) of the kept directory
		wait_for ready5; touch "$R/c/d/five"; touch "$R/go5"'
	grep -o '^/c/[a-z]/[a-z]*: stat=[A-Z]*[a-z]* lstat=[A-Z]*[a-z]*' <<<"$output" >"$T/probes"
	diff -u - "$T/probes" <<-'EOF'
		/c/d/one: stat=ok lstat=ok
		/c/d/two: stat=ENOENT lstat=ENOENT
		/c/d/one: stat=ENOENT lstat=ENOENT
		/c/d/two: stat=ok lstat=ok
		/c/d/two: stat=ENOENT lstat=ENOENT
		/c/d/three: stat=ok lstat=ok
		/c/d/three: stat=ENOENT lstat=ENOENT
		/c/d/four: stat=ok lstat=ok
		/c/d/four: stat=ENOENT lstat=ENOENT
		/c/d/five: stat=ok lstat=ok
		/c/d/five: stat=ENOENT lstat=ENOENT
		/c/g/five: stat=ok lstat=ok
	EOF
}

@test "a directory a stat kept, renamed, replaced, removed or moved out of the root by the host or the guest, is looked up anew" {
	cached_probes
}

@test "the same, seen by one process whose sentry thread asks its own io_uring from its first lookup" {
	RING_AFTER=0 cached_probes one
}

@test "a kept directory moved out of the root and back by the host, again and again, never shows the guest what was put in it outside" {
	mkdir -p "$R/c/d" "$T/x"
	touch "$R/c/d/inside"
	chmod -R a+rwX "$R"
	cat >"$T/mover.sh" <<-'EOF'
		R=$1 T=$2
		while [ ! -e "$T/stop" ]; do
			mv "$R/c/d" "$T/x/d" && touch "$T/x/d/leak" && rm "$T/x/d/leak" && mv "$T/x/d" "$R/c/d"
		done
	EOF
	bash "$T/mover.sh" "$R" "$T" &
	local mover=$!
	PVX_OPTS=(--root "$R")
	PVX_DCACHE_AFTER=0 pvx_run_split /path_race leakloop /c/d 200000
	touch "$T/stop"
	wait "$mover"
	echo "status=$status"$'\n'"$output"$'\n'"stderr: $PVX_STDERR_TEXT" >&2
	assert_status 0
	assert_contains "$output" "leak: 0 "
	# the race was run: the directory was seen in the root and found gone
	local inside missing
	inside=$(sed -n 's/.*inside: \([0-9]*\).*/\1/p' <<<"$output")
	missing=$(sed -n 's/.*missing: \([0-9]*\).*/\1/p' <<<"$output")
	((inside > 0 && missing > 0))
}

@test "stats through more directories than the cache keeps, and past its marks, agree with the host's" {
	# 300 directories of 3 levels, a file in each: the cache drops its fds every 128 directories.
	local i j
	for i in $(seq 20); do
		for j in $(seq 15); do
			mkdir -p "$R/t/$i/$j"
			echo "$i.$j" >"$R/t/$i/$j/f"
		done
		ln -s ../1 "$R/t/$i/up"
	done
	chmod -R a+rwX "$R"
	(cd "$R" && "$BUSYBOX" find t -name f | sort && "$BUSYBOX" find -L t/*/up -maxdepth 1 | sort) >"$T/host.out"
	PVX_OPTS=(--root "$R")
	PVX_DCACHE_AFTER=0 pvx_run_split /bin/busybox sh -c 'cd / && for k in 1 2; do /bin/busybox find t -name f | sort; /bin/busybox find -L t/*/up -maxdepth 1 | sort; done'
	echo "stderr: $PVX_STDERR_TEXT" >&2
	assert_status 0
	cat "$T/host.out" "$T/host.out" | diff -u - "$PVX_STDOUT"
}

@test "a mount over a directory a stat kept is seen at once, and the host can unmount what the guest looked into" {
	[[ $EUID == 0 ]] || skip "needs root (mounts in a private mount namespace)"
	command -v unshare >/dev/null || skip "no unshare"
	unshare -m true 2>/dev/null || skip "unshare -m not permitted here"
	mkdir -p "$R/k/d"
	touch "$R/k/d/under"
	chmod -R a+rwX "$R"
	# unshare -m: the mounts are the test's own (private propagation, unshare's default, said again). One probe
	# process throughout; twice: its sentry thread asking the epoll, then its own io_uring.
	local RING_AFTER
	for RING_AFTER in "" 0; do
		rm -f "$R"/ready* "$R"/go*
		stepped_run 'p /k/d/under /k/d/over @1 /k/d/under /k/d/over @2 /k/d/under /k/d/over' '
			wait_for ready1; mount -t tmpfs -o mode=0777 tmpfs "$R/k/d"; touch "$R/k/d/over"; touch "$R/go1"
			wait_for ready2; umount "$R/k/d"; touch "$R/go2"' unshare -m --propagation private
		grep -o '^/k/d/[a-z]*: stat=[A-Z]*[a-z]* lstat=[A-Z]*[a-z]*' <<<"$output" | diff -u - <(cat <<-'EOF'
			/k/d/under: stat=ok lstat=ok
			/k/d/over: stat=ENOENT lstat=ENOENT
			/k/d/under: stat=ENOENT lstat=ENOENT
			/k/d/over: stat=ok lstat=ok
			/k/d/under: stat=ok lstat=ok
			/k/d/over: stat=ENOENT lstat=ENOENT
		EOF
		)
	done
}

@test "the directory cache starts only after thousands of lookups: a short run makes no fanotify group (its teardown at exit waits for an SRCU grace period)" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "strace -f of the sandbox: the ptrace platform's stubs are pvx's to trace"
	command -v strace >/dev/null || skip "strace not installed"
	run timeout -k 5 60 strace -f -qq -e trace=fanotify_init -o "$T/short" "$PVX" run -- "$G" statloop /usr/bin/env 100
	assert_status 0
	! grep -q 'fanotify_init(' "$T/short"
	# and it does start, for a run that stats enough through directories
	PVX_DCACHE_AFTER=50 run timeout -k 5 60 strace -f -qq -e trace=fanotify_init,statx -o "$T/long" "$PVX" run -- \
		"$G" statloop /usr/bin/env 100
	assert_status 0
	grep -q 'fanotify_init(' "$T/long"
	grep -q 'statx([0-9]*, "env", ' "$T/long"
}

@test "a sentry thread that looks up often asks its own io_uring, not an epoll_wait per lookup; rings go with their threads" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "strace -f of the sandbox: the ptrace platform's stubs are pvx's to trace"
	command -v strace >/dev/null || skip "strace not installed"
	[[ $(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0) == 0 ]] || skip "io_uring disabled here: the epoll_wait answers"
	PVX_DCACHE_AFTER=0 run timeout -k 5 60 strace -f -qq -e trace=epoll_wait,io_uring_setup -o "$T/ring" "$PVX" run -- \
		"$G" statloop /usr/bin/env 2000
	assert_status 0
	local waits
	waits=$(grep -c 'epoll_wait(' "$T/ring")
	echo "epoll_wait: $waits" >&2
	((waits < 400))
	grep -q 'io_uring_setup(' "$T/ring"
	# without the ring, one a lookup: the count above is the ring's doing
	PVX_DCACHE_AFTER=0 PVX_DCACHE_RING_AFTER=1000000 run timeout -k 5 60 strace -f -qq -e trace=epoll_wait,io_uring_setup \
		-o "$T/noring" "$PVX" run -- "$G" statloop /usr/bin/env 2000
	assert_status 0
	waits=$(grep -c 'epoll_wait(' "$T/noring")
	((waits >= 2000))
	! grep -q 'io_uring_setup(' "$T/noring"
	# 24 tasks one after another, each with a ring from its first lookup: at most 16 live at once, so the later
	# ones get theirs only if the earlier ones' were freed at their end
	PVX_DCACHE_AFTER=0 PVX_DCACHE_RING_AFTER=0 run timeout -k 5 120 strace -f -qq -e trace=io_uring_setup -o "$T/many" \
		"$PVX" run -- /bin/busybox sh -c 'for i in $(/bin/busybox seq 24); do '"$G"' statloop /usr/bin/env 20 || exit 1; done'
	assert_status 0
	local made
	made=$(grep -c 'io_uring_setup(.*= [0-9]' "$T/many")
	echo "rings made: $made" >&2
	((made >= 24))
}
