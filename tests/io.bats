#!/usr/bin/env bats
# Readiness (issue 6): poll, ppoll, select and pselect6 on pipes, their timeouts and signal masks.
# More fds and I/O calls: memfd_create, eventfd, close_range, flock, fadvise64/readahead, p{read,write}v{,2},
# sendfile, copy_file_range, msync, mincore; the calls each kind of file answers (io_kinds.c).
# Static guests tests/guest/io_poll.c and io_extra.c, musl and glibc builds, each compared with its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# io MODE: both builds of io_poll MODE against their native runs
io() { compare_flavours 0 io_poll "$@"; }

# io_extra MODE: the same for io_extra, whose files are made in the test's directory (--rw)
io_extra() {
	PVX_OPTS=(--rw)
	compare_flavours 0 io_extra "$@"
}

@test "io: poll revents of pipe ends: empty, data, full, EOF, no reader, bad fd, fd -1" {
	io ready
	grep -qx 'writer closed, data left: poll = 1 revents IN HUP' "$sandbox_out"
	grep -qx 'reader closed, write end: poll = 1 revents OUT ERR' "$sandbox_out"
	grep -qx 'fd 999 (not open): poll = 1 revents NVAL' "$sandbox_out"
}

@test "io: select and pselect sets; EBADF for a closed fd in a set" {
	io select
	grep -qx 'closed fd in the read set: select = -1 EBADF' "$sandbox_out"
}

@test "io: timeouts expire; select and the raw ppoll/pselect6 leave the time that remained (not with STICKY_TIMEOUTS)" {
	io timeout
	grep -qx 'raw ppoll, empty pipe, 30 ms: 0, timespec left 0.000000000' "$sandbox_out"
	grep -qx 'select with data, 5 s: 1, time left between 4 s and 5 s: yes' "$sandbox_out"
	has 'STICKY_TIMEOUTS select, 20 ms: 0, timeval left 0.020000' \
		'STICKY_TIMEOUTS raw ppoll, 20 ms: 0, timespec left 0.020000000' \
		'STICKY_TIMEOUTS raw pselect6, 20 ms: 0, timespec left 0.020000000'
}

@test "io: ppoll's signal mask: a pending signal it unblocks ends the wait, unless an fd is ready" {
	io ppoll-mask
	grep -q '^ppoll, nothing ready, SIGUSR1 pending and unblocked by its mask: -1 EINTR, handler ran 1' "$sandbox_out"
	grep -qx 'ppoll, fd ready, SIGUSR1 pending: 1 0, handler ran 0, still pending yes, blocked yes' "$sandbox_out"
}

@test "io: pselect's signal mask: a pending signal it unblocks ends the wait, unless an fd is ready" {
	io pselect-mask
	grep -q '^pselect, nothing ready, SIGUSR1 pending and unblocked by its mask: -1 EINTR, handler ran 1' "$sandbox_out"
}

@test "io: a signal unblocked only by ppoll's or pselect's mask interrupts the wait" {
	io mask-wait
	grep -q '^ppoll waiting forever.*: -1 EINTR, handler ran 1, blocked again yes' "$sandbox_out"
	grep -q '^pselect waiting forever.*: -1 EINTR, handler ran 1, blocked again yes' "$sandbox_out"
}

@test "io: EINVAL for a bad sigsetsize or timeout, EFAULT for bad pollfd and fd_set pointers" {
	io errors
}

@test "io: memfd_create: flags and name limits; write, ftruncate, fstat; MAP_SHARED seen across fork" {
	io_extra memfd
	grep -qx 'name of 250 bytes: -1 EINVAL' "$sandbox_out"
	grep -qx 'parent.s mapping sees the child.s store: "CHILD memfd", its pwrite: "pw"' "$sandbox_out"
	grep -qx 'MAP_PRIVATE store: mapping "pHILD", file 5 "CHILD"' "$sandbox_out"
}

@test "io: memfd seals with fcntl F_ADD_SEALS/F_GET_SEALS: write, shrink, grow, seal" {
	io_extra seals
	grep -qx 'F_SEAL_WRITE with a writable shared mapping: -1 EBUSY' "$sandbox_out"
	grep -qx 'mmap MAP_SHARED writable: -1 EPERM' "$sandbox_out"
	grep -qx 'F_GET_SEALS: 15' "$sandbox_out"
}

@test "io: eventfd counter and semaphore reads, EAGAIN, overflow, poll readiness" {
	io_extra eventfd
	grep -qx 'after 5 + 2: read 8 value 7' "$sandbox_out"
	grep -qx 'semaphore 0: read -1 EAGAIN value 0' "$sandbox_out"
	grep -qx 'full: poll 1 IN' "$sandbox_out"
	grep -qx 'after the bad buffer: read -1 EAGAIN value 0' "$sandbox_out"
}

@test "io: eventfd blocking read woken by another process, interrupted by a signal (EINTR), restarted" {
	io_extra eventfd-wait
	grep -qx 'blocking read, SIGUSR1 without SA_RESTART: read -1 EINTR value 0' "$sandbox_out"
	grep -qx 'blocking read, SIGUSR1 with SA_RESTART, then a write of 7: read 8 value 7' "$sandbox_out"
}

@test "io: close_range closes or sets close-on-exec; EINVAL for first > last and bad flags" {
	io_extra close-range
	grep -qx 'after: 3=open 4=closed 5=closed 6=cloexec 7=cloexec 8=cloexec' "$sandbox_out"
	grep -qx 'close_range(5, 4, 0): -1 EINVAL' "$sandbox_out"
}

@test "io: flock conflicts between opens (LOCK_NB), shared by dup and fork" {
	io_extra flock
	grep -qx 'LOCK_EX|LOCK_NB on b (another open): -1 EAGAIN' "$sandbox_out"
	grep -qx 'child: inherited fd locks, its own open EWOULDBLOCK: exit 0' "$sandbox_out"
}

@test "io: a blocking flock waits for another process's unlock; a signal interrupts it" {
	io_extra flock-wait
	grep -qx 'child got the lock after the unlock: exit 0' "$sandbox_out"
	grep -qx 'child: blocking flock, SIGUSR1 without SA_RESTART: EINTR, handler ran: yes' "$sandbox_out"
}

@test "io: fadvise64 and readahead: EBADF, ESPIPE, EINVAL" {
	io_extra fadvise
	grep -qx 'fadvise on a pipe: -1 ESPIPE' "$sandbox_out"
	grep -qx 'fadvise advice 99: -1 EINVAL' "$sandbox_out"
}

@test "io: preadv/pwritev at offsets; preadv2/pwritev2 with offset -1 and RWF_* flags" {
	io_extra preadv
	grep -qx 'preadv2 offset -1 at position 12: 4 "AABB"' "$sandbox_out"
	grep -qx 'preadv2 RWF_NOWAIT offset -1 on an empty pipe: -1 EAGAIN' "$sandbox_out"
	grep -qx 'preadv2 unknown flag 0x40000000: -1 EOPNOTSUPP' "$sandbox_out"
}

@test "io: sendfile file to pipe and file, offsets written back; EPIPE and a signal on a full pipe" {
	io_extra sendfile
	grep -qx 'sendfile file->pipe, offset 4, 6 bytes: 6, offset now 10, file position 2' "$sandbox_out"
	grep -qx 'sendfile to a full pipe, SIGUSR1 without SA_RESTART: -1 EINTR, handler ran: yes, offset 0' "$sandbox_out"
	grep -qx 'sendfile to a pipe without a reader: -1 EPIPE, SIGPIPE handler ran 1' "$sandbox_out"
}

@test "io: copy_file_range between files with and without offsets; errors" {
	io_extra copy-range
	grep -qx 'copy_file_range offsets 4 -> 8, 6 bytes: 6, offsets 10 14' "$sandbox_out"
	grep -qx 'copy_file_range to a pipe: -1 EINVAL' "$sandbox_out"
}

@test "io: msync of a MAP_SHARED file mapping, then read(); EINVAL and ENOMEM" {
	io_extra msync
	grep -qx 'read(): 27 "written through the mapping"' "$sandbox_out"
	grep -qx 'msync over an unmapped page: -1 ENOMEM' "$sandbox_out"
}

@test "io: mincore residency of touched pages; ENOMEM for unmapped ranges, EFAULT for bad vectors" {
	io_extra mincore
	grep -qx 'anonymous, pages 0 and 2 touched: 0, resident 1 0 1' "$sandbox_out"
	grep -qx 'middle page unmapped: -1 ENOMEM' "$sandbox_out"
	grep -qx 'vector at a kernel address: -1 EFAULT' "$sandbox_out"
}

@test "io: readv/writev of 3 and 100 iovecs; a read-only page among them; iovecs at the stub's pages and past user space; RLIMIT_FSIZE does not bound readv" {
	io_extra iov-many
	grep -qx 'readv of 100 iovecs reversed: 700, fold baeb7c764e034703, position 721' "$sandbox_out"
	grep -qx 'readv of 100 iovecs, iovecs 80 on in a read-only page: 560, position 560' "$sandbox_out"
	grep -qx "readv, third iovec at the stub's shared pages: 8, position 8" "$sandbox_out"
	grep -qx 'preadv, third iovec at a kernel address: -1 EFAULT' "$sandbox_out"
	grep -qx "writev, first iovec at the stub's text: -1 EFAULT" "$sandbox_out"
	grep -qx '  file after: 721 bytes, fold 1f80ea3b12b62d94' "$sandbox_out"
	grep -qx 'readv 15+15 from it: 21 "wbglqafkpuzetyd" "insxch"' "$sandbox_out"
	grep -qx 'RLIMIT_FSIZE 600: readv 4+6+11 at 650: 21, position 671; preadv at 710: 11' "$sandbox_out"
	grep -qx 'RLIMIT_FSIZE 600: pwritev 4+6+11 at 590: 10, at 600: -1 EFBIG' "$sandbox_out"
}

@test "io: a read into a buffer that runs into a read-only or unmapped page: short count, position, data; EFAULT on the first page; 0 at end of file; stacks grow" {
	io_extra short-read
	grep -qx '20 pages, page 17 read-only, read: 69632, position 69637, data right' "$sandbox_out"
	grep -qx '20 pages from 3000, page 9 unmapped, readv: 33864, position 33869, data right' "$sandbox_out"
	grep -qx 'first page read-only, pread: -1 EFAULT, position 5, data -' "$sandbox_out"
	grep -qx '4 KiB from 3000, second page read-only, read: 1096, position 1101, data right' "$sandbox_out"
	grep -qx '4 KiB from 3000, second page unmapped, pread: 1096, position 5, data right' "$sandbox_out"
	has 'at end of file, buffer at NULL, read: 0' 'past end of file, buffer at NULL, pread: 0' \
		'at end of file, read-only buffer, read: 0' 'at end of file, buffer at a kernel address, read: -1 EFAULT' \
		'pipe, read-only buffer: -1 EFAULT, then: 5 "hello"' \
		'file into 2 pages below a MAP_GROWSDOWN mapping: 100, data there' 'pipe into 4 pages below it: 5 "world"'
}

@test "io: each kind of file answers its own calls: /proc text, eventfd, pipe, directory, memfd (issue 12)" {
	for m in proc eventfd pipe dir memfd; do
		PVX_OPTS=(--rw)
		compare_flavours 0 io_kinds "$m"
		case $m in
		proc)
			grep -qx 'lseek SEEK_END 0: -1 EINVAL' "$sandbox_out"
			grep -qx 'mmap: -1 ENODEV' "$sandbox_out"
			grep -qx 'fstat: 0 regular yes size 0' "$sandbox_out"
			grep -qx 'fchmod: -1 EPERM' "$sandbox_out" ;;
		eventfd)
			grep -qx 'preadv at 0: -1 ESPIPE' "$sandbox_out"
			grep -qx 'F_GETPIPE_SZ: -1 EBADF' "$sandbox_out" ;;
		pipe) grep -qx 'F_GETFL has O_NONBLOCK: yes' "$sandbox_out" ;;
		dir) grep -qx 'F_SETPIPE_SZ: -1 EBADF' "$sandbox_out" ;;
		memfd) grep -qx 'FIONREAD: 0 value 6' "$sandbox_out" ;;
		esac
	done
}

@test "fcntl record locks: POSIX locks between processes (F_GETLK's pid, close of any fd, EDEADLK, exec), OFD locks, errors" {
	PVX_OPTS=(--rw)
	compare_flavours 0 locks
	grep -qx "child: F_GETLK write 5-6: write 0 10 by parent" "$sandbox_out"
	grep -qx "child: after the parent closed another fd: unlocked" "$sandbox_out"
	grep -qx "parent: F_SETLKW 50-60 (held by the child, which waits for us): EDEADLK" "$sandbox_out"
	grep -qx "ofd child: F_SETLKW 70-80 ended by SIGALRM: EINTR" "$sandbox_out"
	grep -qx "after execve, a child sees: write 0 1 by parent" "$sandbox_out"
}

@test "fcntl record locks: sqlite (python3's sqlite3) writes and reads a database in the sandbox" {
	[[ -x /usr/bin/python3 ]] || skip "no python3"
	/usr/bin/python3 -c 'import sqlite3' 2>/dev/null || skip "no sqlite3 module"
	PVX_OPTS=(--rw)
	compare_native /usr/bin/python3 -c 'import sqlite3, os
c = sqlite3.connect("t.db"); c.execute("create table t(x)")
c.executemany("insert into t values (?)", [(i,) for i in range(100)]); c.commit()
d = sqlite3.connect("t.db", timeout=0); print(d.execute("select count(*), sum(x) from t").fetchone())
c.execute("begin exclusive")
try: d.execute("insert into t values (1)"); print("no lock")
except sqlite3.OperationalError as e: print("second connection:", e)
c.rollback(); os.unlink("t.db")'
	grep -qx "second connection: database is locked" "$sandbox_out"
}

@test "io: a mapping holds its file's open file description (OFD lock) while it lasts, and not after munmap and close" {
	chmod 777 .
	PVX_OPTS=(--rw)
	compare_flavours 0 mmap_ofd
	has 'closed, still mapped twice: second description'"'"'s lock: Resource temporarily unavailable' \
		'no mapping left: granted' 'third description'"'"'s lock: granted' 'mapped, unmapped, closed: next lock: granted'
}
