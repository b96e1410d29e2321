#!/usr/bin/env bats
# Issue 15, the long tail: /proc/sys and /proc/config.gz, scheduling and affinity, ioprio, the mlock family,
# NUMA for one node, time and identity calls, old interfaces. Static guest tests/guest/misc_sys.c (musl and glibc)
# compared with its native run where the behaviour is Linux's; host-side checks where the value is the sandbox's.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# sysval NAME: /proc/sys/NAME as the guest reads it
sysval() {
	pvx_run "$BUSYBOX" cat "/proc/sys/$1"
	[[ $status == 0 ]] || fail_msg "cat /proc/sys/$1: $output"
}

@test "/proc/sys: the limits pvx enforces (pid_max, threads-max, nr_open, pipe-max-size, pipe-user-pages, max_map_count, mmap_min_addr, overcommit)" {
	sysval kernel/pid_max
	[[ $output == 1025 ]] || fail_msg "pid_max: $output"
	sysval kernel/threads-max
	[[ $output == 1024 ]] || fail_msg "threads-max: $output"
	sysval fs/nr_open
	[[ $output == 1048576 ]] || fail_msg "nr_open: $output"
	sysval fs/pipe-max-size
	[[ $output == "$(cat /proc/sys/fs/pipe-max-size)" ]] || fail_msg "pipe-max-size: $output"
	sysval fs/file-max
	[[ $output == "$(cat /proc/sys/fs/file-max)" ]] || fail_msg "file-max: $output"
	sysval fs/pipe-user-pages-soft	# pipes are host pipes: the host counts their pages
	[[ $output == "$(cat /proc/sys/fs/pipe-user-pages-soft)" ]] || fail_msg "pipe-user-pages-soft: $output"
	sysval fs/pipe-user-pages-hard
	[[ $output == "$(cat /proc/sys/fs/pipe-user-pages-hard)" ]] || fail_msg "pipe-user-pages-hard: $output"
	sysval vm/max_map_count
	[[ $output == 65530 ]] || fail_msg "max_map_count: $output"
	sysval vm/mmap_min_addr
	[[ $output == 65536 ]] || fail_msg "mmap_min_addr: $output"
	sysval vm/overcommit_memory
	[[ $output == 2 ]] || fail_msg "overcommit_memory: $output"
	sysval kernel/tainted
	[[ $output == 0 ]]
	# the limit is the one enforced: RLIMIT_NOFILE is inherited from pvx, its hard limit cannot pass nr_open, and
	# its soft one leaves half the sentry's host fds to the rest of the sandbox (all of them, or fs.nr_open as root)
	pvx_run "$BUSYBOX" sh -c 'ulimit -n; ulimit -H -n'
	local soft hard half
	soft=$(ulimit -n) hard=$(ulimit -H -n)
	((soft <= 1048576)) || soft=1048576
	((hard <= 1048576)) || hard=1048576
	half=$((soft <= hard / 2 ? soft : hard / 2))
	[[ $output == "$half"$'\n'"$hard" || ($EUID == 0 && $output == "$soft"$'\n'"$hard") ]] ||
		fail_msg "ulimit -n: $output, natively $soft $hard"
	pvx_run "$BUSYBOX" sh -c 'ulimit -H -n 1048577'
	[[ $status != 0 ]] || fail_msg "a hard limit past nr_open was taken"
}

@test "/proc/sys/kernel: the sandbox's names (hostname, domainname), the host's release; boot_id per sandbox, uuid per read" {
	sysval kernel/hostname
	[[ $output == pvx ]] || fail_msg "hostname: $output"
	sysval kernel/domainname
	[[ $output == "(none)" ]] || fail_msg "domainname: $output"
	sysval kernel/osrelease
	[[ $output == "$(uname -r)" ]] || fail_msg "osrelease: $output"
	sysval kernel/ostype
	[[ $output == Linux ]] || fail_msg "ostype: $output"
	sysval kernel/version
	[[ $output == "$(uname -v)" ]] || fail_msg "version: $output"
	uuid='[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
	pvx_run "$BUSYBOX" sh -c 'cat /proc/sys/kernel/random/boot_id /proc/sys/kernel/random/boot_id
		cat /proc/sys/kernel/random/uuid /proc/sys/kernel/random/uuid'
	[[ $status == 0 && ${#lines[@]} == 4 ]] || fail_msg "$output"
	for l in "${lines[@]}"; do [[ $l =~ ^$uuid$ ]] || fail_msg "not a UUID: $l"; done
	[[ ${lines[0]} == "${lines[1]}" ]] || fail_msg "boot_id changed within one run"
	[[ ${lines[0]} != "$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)" ]] || fail_msg "the host's boot_id"
	[[ ${lines[2]} != "${lines[3]}" ]] || fail_msg "uuid repeated"
	first=${lines[0]}
	pvx_run "$BUSYBOX" cat /proc/sys/kernel/random/boot_id
	[[ $output =~ ^$uuid$ && $output != "$first" ]] || fail_msg "a second sandbox has the same boot_id"
	pvx_run "$BUSYBOX" ls /proc/sys /proc/sys/vm /proc/sys/kernel/random
	assert_contains "$output" "vm"
	assert_contains "$output" "overcommit_memory"
	assert_contains "$output" "boot_id"
	# uname's nodename is the one /proc shows
	pvx_run "$BUSYBOX" uname -n
	[[ $output == pvx ]]
}

@test "/proc/sys is read-only (EACCES, as for a process that is not root); other sysctls do not exist" {
	for f in kernel/pid_max kernel/hostname fs/nr_open vm/overcommit_memory kernel/random/uuid; do
		pvx_run "$BUSYBOX" sh -c "echo 1 > /proc/sys/$f"
		[[ $status != 0 && $output == *"ermission denied"* ]] || fail_msg "write to $f: $status $output"
	done
	sysval vm/overcommit_memory
	[[ $output == 2 ]]
	pvx_run "$BUSYBOX" cat /proc/sys/kernel/sched_child_runs_first
	[[ $status != 0 && $output == *"No such file"* ]] || fail_msg "sched_child_runs_first: $output"
	pvx_run "$BUSYBOX" sh -c "echo x > /proc/sys/kernel/core_pattern"
	[[ $status != 0 && $output == *"ermission denied"* ]] || fail_msg "write to core_pattern: $status $output"
	pvx_run "$BUSYBOX" cat /proc/sys/kernel/random/boot_id/x
	[[ $status != 0 ]]
}

@test "/proc/config.gz: a gzip file of the sandbox's kernel options, y where the table has the syscalls" {
	pvx_run "$BUSYBOX" sh -c 'zcat /proc/config.gz'
	[[ $status == 0 ]] || fail_msg "zcat: $output"
	assert_contains "$output" "CONFIG_FUTEX=y"
	assert_contains "$output" "CONFIG_EPOLL=y"
	assert_contains "$output" "CONFIG_64BIT=y"
	assert_contains "$output" "# CONFIG_MODULES is not set"
	# each option follows the table: SysV IPC only once shmget, semget and msgget are emulated
	if "$PVX" syscalls | grep -Eq '^[0-9]+ +shmget +unsupported'; then
		assert_contains "$output" "# CONFIG_SYSVIPC is not set"
	else
		assert_contains "$output" "CONFIG_SYSVIPC=y"
	fi
	if "$PVX" syscalls | grep -Eq '^[0-9]+ +io_uring_setup +unsupported'; then
		assert_contains "$output" "# CONFIG_IO_URING is not set"
	fi
	# gzip's CRC and length check out (gzip -t), and the host's gzip reads it too
	pvx_run "$BUSYBOX" sh -c 'gzip -t < /proc/config.gz && echo ok'
	[[ $output == ok ]] || fail_msg "gzip -t: $output"
	pvx_run "$BUSYBOX" ls /proc
	assert_contains "$output" "config.gz"
}

@test "sched_setaffinity/getaffinity: kept per thread, inherited, EINVAL outside the CPUs; huge and forged lengths, bad pointers, as natively" {
	compare_flavours 0 misc_sys affinity
	grep -q '^set one: 0$' "$native_out"
	grep -q '^child: cpus=1$' "$native_out"
	has "getcpu pinned to the first: yes" "getcpu pinned to the last: yes"
	grep -q '^set 1MiB: 0$' "$native_out"
}

@test "taskset and nproc (busybox) see the mask a guest sets, as natively" {
	cmd='taskset -p $$ | sed "s/pid [0-9]*/pid N/"; taskset -p 1 $$ >/dev/null; taskset -p $$ | sed "s/pid [0-9]*/pid N/"; nproc; taskset 1 nproc'
	compare_native "$BUSYBOX" sh -c "$cmd"
	grep -q 'mask: 1$' "$native_out"
}

@test "sched_rr_get_interval, sched_setattr/getattr: fair policies and nice kept, real-time and deadline EPERM, sizes as natively" {
	compare_flavours 0 misc_sys sched
	grep -q '^fifo 10: EPERM$' "$native_out"
	grep -q '^size 10: E2BIG size now 56$' "$native_out"
	grep -q '^getscheduler: 40000000$' "$native_out"
}

@test "ioprio_set/get: kept per thread, inherited unless class NONE, validated as Linux; busybox ionice, as natively" {
	compare_flavours 0 misc_sys ioprio
	grep -q '^child: 16391$' "$native_out"
	grep -q '^rt 0: EPERM$' "$native_out"
	compare_native "$BUSYBOX" sh -c 'ionice -c 3 -p $$; ionice -p $$; ionice -c 2 -n 5 ionice'
	grep -q '^idle$' "$native_out"
}

@test "mlock, mlock2, munlock, mlockall, munlockall: RLIMIT_MEMLOCK, holes, flags, VmLck, not inherited by fork, as natively" {
	compare_flavours 0 misc_sys mlock
	grep -q '^mlock across hole: ENOMEM lck+20$' "$native_out"
	grep -q '^mlock at limit 0: EPERM$' "$native_out"
	grep -q '^child lck: 0$' "$native_out"
	grep -q '^resident: 1110$' "$native_out"
}

@test "settimeofday, clock_settime, adjtimex, clock_adjtime: argument checks then EPERM, reads work; sethostname, syslog, vhangup, acct EPERM; sysfs, ustat, as natively" {
	compare_flavours 0 misc_sys ident
	grep -q '^adjtimex read: ok$' "$native_out"
	grep -q '^settimeofday bad usec: EINVAL$' "$native_out"
	grep -q '^sysfs proc: found$' "$native_out"
	grep -q '^ustat root: 0$' "$native_out"
	# busybox's reads of the clock's state and the kernel log
	pvx_run "$BUSYBOX" hostname foo
	[[ $status != 0 && $output == *"ermitted"* ]] || fail_msg "hostname foo: $status $output"
	pvx_run "$BUSYBOX" dmesg
	[[ $status != 0 && $output == *"ermitted"* ]] || fail_msg "dmesg: $status $output"
	sysval kernel/dmesg_restrict
	[[ $output == 1 ]]
}

@test "membarrier (registration, fork), syncfs, sync_file_range, cachestat: errors and results as natively" {
	compare_flavours 0 misc_sys sync
	grep -q '^membarrier private unregistered: EPERM$' "$native_out"
	grep -q '^membarrier private: 0$' "$native_out"
	grep -q '^sync_file_range pipe: ESPIPE' "$native_out"
}

@test "getdents(2), the old linux_dirent: the same entries as getdents64 in small reads; errors as natively" {
	mkdir d && touch d/{a,bb,ccc}_with_a_longer_name_{1..20} && ln -s x d/link && mkdir d/sub
	cd d
	compare_flavours 0 misc_sys getdents
	grep -q '^getdents: >2 entries, as getdents64: yes$' "$native_out"
	grep -q '^getdents file: ENOTDIR$' "$native_out"
}

@test "RLIMIT_FSIZE: writes cut at the limit, EFBIG and SIGXFSZ past it (write, pwrite, writev, O_APPEND, truncate, fallocate); RLIMIT_CPU: SIGXCPU each second past the soft limit, SIGKILL at the hard one; as natively" {
	PVX_OPTS=(--rw)
	compare_flavours 0 misc_sys limits
	grep -q '^write 6 more (cut): 2$' "$native_out"
	grep -q '^default SIGXFSZ: 153$' "$native_out"
	grep -q '^xcpu: soft now 2$' "$native_out"
	grep -q '^cpu child: 137$' "$native_out"
}

@test "RLIMIT_NPROC: a fork past it is EAGAIN for a user that is not root (the guest's uid)" {
	if [[ $EUID != 0 ]]; then
		compare_native "$(guest misc_sys)" nproc
	fi
	pvx_run "$(guest misc_sys)" nproc
	[[ $output == "fork at 1: EAGAIN" ]] || fail_msg "$output"
	if [[ $EUID == 0 ]]; then	# root's guest under --privileged is root: exempt, as Linux's INIT_USER
		PVX_OPTS=(--privileged)
		pvx_run "$(guest misc_sys)" nproc
		[[ $output == "fork at 1: ok" ]] || fail_msg "--privileged: $output"
	fi
}

@test "remap_file_pages: a shared mapping shows the file's pages from pgoff afterwards, writes go through; Linux's EINVALs; as natively" {
	compare_flavours 0 misc_sys remap
	grep -q '^after: cbab$' "$native_out"
	grep -q '^write through: z$' "$native_out"
}

@test "chroot without CAP_SYS_CHROOT: the lookup's errors (ENAMETOOLONG, ENOTDIR, ENOENT, EFAULT, ELOOP), then EPERM, as natively" {
	PVX_OPTS=(--rw)
	compare_flavours 0 misc_sys chroot
	has "too long: ENAMETOOLONG" "a file: ENOTDIR" "symlink loop: ELOOP" "dot: EPERM"
}

@test "/dev/urandom: RNDGETENTCNT is the host's count (and /proc/sys/kernel/random/entropy_avail); changing the pool is EPERM, as natively" {
	compare_flavours 0 misc_sys random
	has "RNDGETENTCNT: 0, /proc says the same: yes" "RNDADDTOENTCNT: EPERM" "RNDGETENTCNT on /dev/zero: ENOTTY"
}

@test "mseal: its errors; a sealed VMA refuses munmap, mremap (from and onto), mmap MAP_FIXED, mprotect, discarding read-only memory; kept by fork, as natively" {
	run "$(guest mseal)"
	[[ $output != "mseal: ENOSYS" ]] || skip "this kernel has no mseal(2) (Linux < 6.10)"
	compare_flavours 0 mseal
	has "flags 1: EINVAL" "range with a hole: ENOMEM" "mprotect over it: EPERM" "munmap over it: EPERM" "mremap onto it: EPERM" \
		"mremap shrinking, the tail sealed: EPERM" "mmap MAP_FIXED over it: EPERM" "MADV_DONTNEED, read-only: EPERM" "child: munmap sealed: EPERM" "munmap next to it: 0"
}

@test "name_to_handle_at: its errors in Linux's order, EOVERFLOW with the size needed, a handle; open_by_handle_at EPERM without CAP_DAC_READ_SEARCH, as natively" {
	PVX_OPTS=(--rw)
	compare_flavours 0 misc_sys fhandle
	has "bad dirfd: EBADF" "dirfd not a directory: ENOTDIR" "bad mount id: EFAULT" "handle_bytes 129: EINVAL" \
		"handle_bytes 0: EOVERFLOW, size needed given: yes, mount id given: yes" "handle: 0, bytes > 0: yes" "open_by_handle_at: EPERM"
}

@test "NUMA, one node: set_mempolicy and get_mempolicy of every mode and flag, their EINVALs and EFAULTs (huge maxnode, nodes past MAX_NUMNODES, nodemasks running off memory), as natively" {
	compare_flavours 0 numa task
	has "set BIND {0}: mode 0x2 mask 0x1 0" "BIND|STATIC: mode 0x8002 mask 0x23 0" "INTERLEAVE|RELATIVE: mode 0x4003 mask 0x8 0" \
		"PREFERRED {} (local): mode 0x4 mask 0 0" "BIND {1}: EINVAL" "maxnode 2000, node 1492 set: EINVAL" \
		"maxnode 1031, bit 1087 set: EINVAL" "maxnode a page of bits + 2: EINVAL" "bad nodemask: EFAULT" \
		"maxnode 2000, nodemask running past the end of memory: EFAULT" "get: MEMS_ALLOWED: 0 mode 0 mask 0x1" \
		"get: maxnode 200: 0 words 0x1 0 0 0 0xffffffffffffffff" "F_NODE under INTERLEAVE: 0 node 0" "F_NODE under DEFAULT: EINVAL"
}

@test "NUMA, one node: mbind keeps a policy per VMA (split, merged back by MPOL_DEFAULT, kept by fork, gone with a new mapping); holes EFAULT; set_mempolicy_home_node, as natively" {
	compare_flavours 0 numa vma
	has "page 1: mode 0x2 mask 0x1 0" "page 3: mode 0 mask 0 0" "VMAs: 3" "page 2 now: mode 0x8003 mask 0x9 0" \
		"child page 1: mode 0x2 mask 0x1 0" "child task: mode 0x1 mask 0x1 0" "mbind BIND over a hole: EFAULT" \
		"mbind DEFAULT over a hole: 0" "mbind DEFAULT, all hole: EFAULT" "page 0 mapped again: mode 0 mask 0 0" \
		"home node 0 over the INTERLEAVE page: EOPNOTSUPP" "home node 0, no policy in range: ENOENT" "mbind wrapping: EINVAL"
}

@test "NUMA, one node: migrate_pages and move_pages (page status present, absent, unmapped; nodes that do not exist ENODEV; bad pointers), as natively" {
	compare_flavours 0 numa migrate
	has "migrate_pages {0} -> {0}: 0" "migrate_pages pid 99999: ESRCH" "move_pages stat: 0 status 0 -2 -14 -14" \
		"move_pages page 1 to node 1: errno 19 status 0 7" "move_pages bad status: EFAULT"
}

@test "name_to_handle_at on /proc: AT_HANDLE_FID only, EOPNOTSUPP without it (no export operations); /proc/filesystems is there (LTP name_to_handle_at03), as natively" {
	compare_flavours 0 fhandle_proc
	has "/proc/filesystems: FID 0, plain EOPNOTSUPP" "/proc/self/status: FID 0, plain EOPNOTSUPP" "/proc: FID 0, plain EOPNOTSUPP" \
		"a file: plain 0" "/proc/filesystems: opened, lists proc: yes"
}

@test "NUMA, one node: the policies a guest can make are bounded (4096 distinct, then ENOMEM), those made before still work" {
	pvx_run "$(guest numa)" bound
	[[ $status == 0 ]] || fail_msg "status $status: $output"
	[[ $output == *"distinct policies: 4"*", then ENOMEM"* ]] || fail_msg "$output"
	[[ $output == *"a policy made before: 0"* ]] || fail_msg "$output"
}

@test "/proc/PID/smaps: Size, Rss (the stub's pages in memory), Locked, Anonymous of mlock'ed, populated, untouched and written mappings (LTP mlock05); move_pages of another process's pages, as natively" {
	compare_flavours 0 smaps
	has "mlocked: Size: 1024 Rss: 1024 Locked: 1024 Anonymous: 1024" "untouched: Size: 1024 Rss: 0 Locked: 0 Anonymous: 0" \
		"three pages written: Size: 1024 Rss: 12 Locked: 0 Anonymous: 12" "child's pages from the parent: 0 status 0 -2 -14"
}
