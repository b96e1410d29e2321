// SPDX-License-Identifier: GPL-2.0
/*
 * The long tail: calls that change the machine (its clock, host name,
 * kernel log, accounting, terminal) answered as Linux answers a process
 * without the capability they need (the guest holds none: capget), with
 * Linux's argument checks first; the read-only forms that need no
 * capability (adjtimex's reads) go to the host. And the old interfaces:
 * ustat(2), sysfs(2), getdents(2).
 */
#include <dirent.h>
#include <linux/membarrier.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include "pvx/file.h"
#include "pvx/kernel.h"
#include "syscalls/syscalls.h"

/* settimeofday(2): the timeval's EFAULT and EINVAL, then "EPERM: the caller has insufficient privilege" (CAP_SYS_TIME). */
long sys_settimeofday(struct task *t, const long a[6])
{
	struct { int64_t sec, usec; } tv;
	struct { int32_t minuteswest, dsttime; } tz;

	if (a[0]) {
		if (copy_from_guest(t->mm, &tv, (uint64_t)a[0], sizeof(tv)))
			return -EFAULT;
		if (tv.sec < 0 || tv.usec < 0 || tv.usec >= 1000000)
			return -EINVAL;
	}
	if (a[1] && copy_from_guest(t->mm, &tz, (uint64_t)a[1], sizeof(tz)))
		return -EFAULT;
	return -EPERM;
}

/*
 * clock_settime(2): only CLOCK_REALTIME can be set (EINVAL for the other
 * clocks, before the timespec is read); it checks its timespec (EFAULT,
 * EINVAL), then EPERM.
 */
long sys_clock_settime(struct task *t, const long a[6])
{
	struct timespec ts;
	int clk = (int)a[0];

	if (clk != CLOCK_REALTIME)
		return -EINVAL;	/* no clock_set in its k_clock (pvx has no per-process CPU clocks to name) */
	if (copy_from_guest(t->mm, &ts, (uint64_t)a[1], sizeof(ts)))
		return -EFAULT;
	if (clk == CLOCK_REALTIME && (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L))
		return -EINVAL;
	return -EPERM;
}

#define ADJ_ADJTIME_ 0x8000	/* <linux/timex.h>'s, which glibc's <sys/timex.h> does not define */
#define ADJ_OFFSET_READONLY_ 0x2000

/*
 * adjtimex(2) of CLOCK_REALTIME (timekeeping_validate_timex()): modes 0,
 * or ADJ_OFFSET_SS_READ, only read, and go to the host; any change is EPERM
 * ("In order to modify anything, you gotta be super-user!").
 */
static long do_adjtimex(struct task *t, uint64_t buf)
{
	struct timex tx;

	if (copy_from_guest(t->mm, &tx, buf, sizeof(tx)))
		return -EFAULT;
	if (tx.modes & ADJ_ADJTIME_) {
		if (!(tx.modes & 0x0001))	/* the kernel's ADJ_OFFSET_SINGLESHOT bit (glibc's has ADJ_ADJTIME in it) */
			return -EINVAL;
		if (!(tx.modes & ADJ_OFFSET_READONLY_))
			return -EPERM;
	} else if (tx.modes) {
		return -EPERM;
	}
	long r = syscall(SYS_adjtimex, &tx);	/* a read: no capability needed */
	if (r < 0)
		return neg_errno();
	return copy_to_guest(t->mm, buf, &tx, sizeof(tx)) ? -EFAULT : r;
}

long sys_adjtimex(struct task *t, const long a[6])
{
	return do_adjtimex(t, (uint64_t)a[0]);
}

/* clock_adjtime(2): CLOCK_REALTIME is adjtimex; other clocks cannot be adjusted (EOPNOTSUPP), unknown ones EINVAL. */
long sys_clock_adjtime(struct task *t, const long a[6])
{
	struct timex tx;
	int clk = (int)a[0];

	if (copy_from_guest(t->mm, &tx, (uint64_t)a[1], sizeof(tx)))
		return -EFAULT;
	if (clk == CLOCK_REALTIME)
		return do_adjtimex(t, (uint64_t)a[1]);
	if (clk > CLOCK_TAI || clk == 10 || (clk < 0 && (clk & 7) == 3))	/* no such clock; an fd clock pvx lacks */
		return -EINVAL;
	return -EOPNOTSUPP;
}

/* sethostname(2), setdomainname(2): "EPERM the caller did not have the CAP_SYS_ADMIN capability", checked first. */
long sys_sethostname(struct task *t __unused, const long a[6] __unused)
{
	return -EPERM;
}

long sys_setdomainname(struct task *t __unused, const long a[6] __unused)
{
	return -EPERM;
}

/* syslog(2) as under dmesg_restrict=1 (/proc/sys/kernel/dmesg_restrict): every action needs CAP_SYSLOG. */
long sys_syslog(struct task *t __unused, const long a[6] __unused)
{
	return -EPERM;
}

/* vhangup(2) needs CAP_SYS_TTY_CONFIG, acct(2) CAP_SYS_PACCT: checked before anything else. */
long sys_vhangup(struct task *t __unused, const long a[6] __unused)
{
	return -EPERM;
}

long sys_acct(struct task *t __unused, const long a[6] __unused)
{
	return -EPERM;
}

/*
 * ustat(2): the free blocks and inodes of a mounted file system, by its
 * device number; only the guest root's device is one the sandbox has
 * mounted (else EINVAL, "ustat for a device not mounted").
 */
long sys_ustat(struct task *t, const long a[6])
{
	struct { int32_t tfree; uint64_t tinode; char fname[6], fpack[6]; } u;
	struct stat st;

	_Static_assert(sizeof(u) == 32, "struct ustat");
	if (fstat(sandbox.rootfd, &st) < 0 || (dev_t)(unsigned)a[0] != st.st_dev)
		return -EINVAL;
	if (syscall(SYS_ustat, (unsigned)a[0], &u) < 0)
		return neg_errno();
	return copy_to_guest(t->mm, (uint64_t)a[1], &u, sizeof(u));
}

/* The index-th file system type the kernel has, as /proc/filesystems lists them (name into buf); <0 past the end. */
static long fs_type(long index, char *name, size_t size)
{
	char line[128];
	FILE *f = fopen("/proc/filesystems", "re");
	long i = 0, r = -EINVAL;

	while (f && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		if (i++ == index) {
			snprintf(name, size, "%.*s", (int)strcspn(tab + 1, "\n"), tab + 1);
			r = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return r < 0 ? r : i - 1;
}

/* sysfs(2): 1 a type's index by name, 2 the name of index, 3 how many; the kernel's list, as /proc/filesystems. */
long sys_sysfs(struct task *t, const long a[6])
{
	char name[128], want[128];
	long i, r;

	switch ((int)a[0]) {
	case 1:
		r = strncpy_from_guest(t->mm, want, (uint64_t)a[1], sizeof(want));
		if (r < 0)
			return r == -ENAMETOOLONG ? -EINVAL : r;
		for (i = 0; fs_type(i, name, sizeof(name)) >= 0; i++)
			if (!strcmp(name, want))
				return i;
		return -EINVAL;
	case 2:
		if (fs_type((long)(unsigned)a[1], name, sizeof(name)) < 0)
			return -EINVAL;
		return copy_to_guest(t->mm, (uint64_t)a[2], name, strlen(name) + 1);
	case 3:
		for (i = 0; fs_type(i, name, sizeof(name)) >= 0; i++)
			;
		return i;
	}
	return -EINVAL;
}

/*
 * getdents(2), the old struct linux_dirent: d_ino, d_off, d_reclen,
 * d_name, then d_type in the record's last byte. A record is as long as
 * getdents64's for the same name, so the same entries fit in count.
 */
long sys_getdents(struct task *t, const long a[6])
{
	struct file *f = fd_lookup(t->files, (int)a[0]);
	size_t count = MIN((size_t)(unsigned)a[2], 1UL << 20);

	if (!f)
		return -EBADF;
	cleanup_free char *buf = malloc(count ? count : 1);
	cleanup_free char *out = malloc(count ? count : 1);
	if (!buf || !out)
		return -ENOMEM;
	long n = file_getdents(t, f, buf, count);
	if (n < 0)
		return n;
	for (long off = 0; off < n;) {
		struct { uint64_t ino; int64_t off; uint16_t reclen; uint8_t type; char name[]; } *d = (void *)(buf + off);
		if (d->reclen < 20 || off + d->reclen > n)
			return -EIO;
		char *o = out + off;
		size_t len = strnlen(d->name, d->reclen - 19u);
		uint8_t type = d->type;
		uint16_t reclen = d->reclen;
		memcpy(o, &d->ino, 8);
		memcpy(o + 8, &d->off, 8);
		memcpy(o + 16, &reclen, 2);
		memmove(o + 18, d->name, len);
		memset(o + 18 + len, 0, reclen - 18 - len);
		o[reclen - 1] = (char)type;
		off += reclen;
	}
	long r = copy_to_guest(t->mm, (uint64_t)a[1], out, (size_t)n);
	return r ? r : n;
}

#define MB_GET_REGISTRATIONS (1 << 9)
#define MB_REGISTERS (MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED | \
		      MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE)
#define MB_SUPPORTED (MEMBARRIER_CMD_GLOBAL | MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_PRIVATE_EXPEDITED | \
		      MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE | MB_REGISTERS | MB_GET_REGISTRATIONS)

/*
 * membarrier(2) without rseq (pvx has none: its commands are EINVAL, as
 * without CONFIG_RSEQ). Every barrier is the host's MEMBARRIER_CMD_GLOBAL,
 * made with the sentry lock dropped: the guest's threads are threads of
 * stub processes, and a global barrier covers every thread on every CPU,
 * a superset of what each command promises. The private commands need
 * their registration first (EPERM), as Linux's.
 */
long sys_membarrier(struct task *t, const long a[6])
{
	int cmd = (int)a[0];
	struct process *p = t->proc;

	if ((unsigned)a[1])
		return -EINVAL;
	switch (cmd) {
	case MEMBARRIER_CMD_QUERY:
		return MB_SUPPORTED;
	case MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED:
	case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED:
	case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
		p->membarrier_reg |= (unsigned)cmd;
		return 0;
	case MB_GET_REGISTRATIONS:
		return p->membarrier_reg;
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED:
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE:
		if (!(p->membarrier_reg & ((unsigned)cmd << 1)))
			return -EPERM;
		break;
	case MEMBARRIER_CMD_GLOBAL:
	case MEMBARRIER_CMD_GLOBAL_EXPEDITED:
		break;
	default:
		return -EINVAL;
	}
	const long b[6] = { MEMBARRIER_CMD_GLOBAL, 0, 0 };
	long r = task_block(t, NULL, SYS_membarrier, b, false);
	return r == -EINVAL ? 0 : r;	/* a nohz_full host refuses GLOBAL: the trap itself was a barrier */
}

/* syncfs(2): the host's, on the file's host fd; a pipe's or socket's file system has nothing to write (0). */
long sys_syncfs(struct task *t, const long a[6])
{
	long hfd = fd_object(t, (int)a[0], FILE_SYNC);

	if (hfd < 0)
		return hfd == FILE_CALL_DONE ? 0 : hfd;
	return syncfs((int)hfd) < 0 ? neg_errno() : 0;
}

/*
 * sync_file_range(2): "EINVAL flags specifies an invalid bit; or offset
 * or nbytes is invalid"; "ESPIPE fd refers to something other than a
 * regular file, a block device, or a directory" (a pipe, a socket).
 */
long sys_sync_file_range(struct task *t, const long a[6])
{
	uint64_t off = (uint64_t)a[1], end = off + (uint64_t)a[2];
	long hfd = fd_object(t, (int)a[0], FILE_SYNC);

	if (hfd < 0 && hfd != FILE_CALL_DONE)
		return hfd;
	if ((unsigned)a[3] & ~7u)
		return -EINVAL;
	if ((int64_t)off < 0 || (int64_t)end < 0 || end < off)
		return -EINVAL;
	if (hfd == FILE_CALL_DONE)
		return -ESPIPE;
	return syscall(SYS_sync_file_range, (int)hfd, a[1], a[2], (unsigned)a[3]) < 0 ? neg_errno() : 0;
}

/*
 * cachestat(2): the host's count of the file's cached pages, on its host
 * fd; kinds without one (pipes, sockets) have an empty page cache.
 * EBADF, then flags (EINVAL), then the range (EFAULT), as Linux's.
 */
long sys_cachestat(struct task *t, const long a[6])
{
	uint64_t range[2], cs[5] = { 0 };
	long hfd = fd_object(t, (int)a[0], FILE_SYNC);

	if (hfd < 0 && hfd != FILE_CALL_DONE)
		return hfd;
	if ((unsigned)a[3])
		return -EINVAL;
	if (copy_from_guest(t->mm, range, (uint64_t)a[1], sizeof(range)))
		return -EFAULT;
	if (hfd != FILE_CALL_DONE && syscall(451 /* cachestat */, (int)hfd, range, cs, 0) < 0)
		return neg_errno();
	return copy_to_guest(t->mm, (uint64_t)a[2], cs, sizeof(cs));
}
