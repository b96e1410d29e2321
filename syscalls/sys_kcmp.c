// SPDX-License-Identifier: GPL-2.0
/*
 * Calls that look into another guest process: kcmp(2) and
 * process_vm_readv(2)/process_vm_writev(2). Every guest has the sandbox's
 * one uid, so their ptrace_may_access checks always pass; the target is
 * any guest thread id, as find_task_by_vpid.
 */
#include <sys/uio.h>

#include "pvx/events.h"
#include "pvx/kernel.h"
#include "syscalls/syscalls.h"

enum { KCMP_FILE, KCMP_VM, KCMP_FILES, KCMP_FS, KCMP_SIGHAND, KCMP_IO, KCMP_SYSVSEM, KCMP_EPOLL_TFD };

/* A live task's objects; an exited one has no mm, files or fs (exit_mm, exit_files, exit_fs). */
static bool gone(const struct task *p)
{
	return p->state == TASK_ZOMBIE || p->exited || !p->proc->as;
}

/* KCMP_EPOLL_TFD: idx2 points at struct kcmp_epoll_slot { __u32 efd, tfd, toff; } in our memory. */
static long epoll_tfd(struct task *t, struct task *p1, struct task *p2, unsigned long idx1, uint64_t uslot)
{
	uint32_t slot[3];
	struct file *target;
	long r;

	struct file *f1 = p1->files ? fd_lookup(p1->files, (int)idx1) : NULL;
	if (!f1)
		return -EBADF;
	if ((r = copy_from_guest(t->mm, slot, uslot, sizeof(slot))))
		return r;
	struct file *ep = p2->files ? fd_lookup(p2->files, (int)slot[0]) : NULL;
	if (!ep)
		return -EBADF;
	if ((r = epoll_target(ep, (int)slot[1], slot[2], &target)))
		return r;
	return kcmp_order(f1, target, KCMP_FILE);
}

/*
 * kcmp(2): "0 ... equal; 1 ... less than; 2 ... greater than" under an
 * ordering that hides the kernel's addresses; "EBADF type is KCMP_FILE and
 * fd1 or fd2 is not an open file descriptor", "EINVAL type is invalid",
 * "ESRCH Process pid1 or pid2 does not exist". pvx has no I/O contexts and
 * no System V semaphore undo lists: every pair compares equal for
 * KCMP_IO and KCMP_SYSVSEM, as two Linux tasks that have none.
 */
long sys_kcmp(struct task *t, const long a[6])
{
	struct task *p1 = task_find((int)a[0]), *p2 = task_find((int)a[1]);
	int type = (int)a[2];

	if (!p1 || !p2 || !p1->proc || !p2->proc)
		return -ESRCH;
	switch (type) {
	case KCMP_FILE: {
		struct file *f1 = p1->files ? fd_lookup(p1->files, (int)a[3]) : NULL;
		struct file *f2 = p2->files ? fd_lookup(p2->files, (int)a[4]) : NULL;
		return f1 && f2 ? kcmp_order(f1, f2, type) : -EBADF;
	}
	case KCMP_VM:
		return kcmp_order(gone(p1) ? NULL : p1->mm, gone(p2) ? NULL : p2->mm, type);
	case KCMP_FILES:
		return kcmp_order(p1->files, p2->files, type);
	case KCMP_FS:	/* the fs_struct: CLONE_FS shares it */
		return kcmp_order(gone(p1) ? NULL : p1->fs, gone(p2) ? NULL : p2->fs, type);
	case KCMP_SIGHAND:	/* CLONE_SIGHAND shares it between processes too */
		return kcmp_order(p1->proc->sighand, p2->proc->sighand, type);
	case KCMP_IO:
	case KCMP_SYSVSEM:
		return 0;
	case KCMP_EPOLL_TFD:
		return epoll_tfd(t, p1, p2, (unsigned long)a[3], (uint64_t)a[4]);
	}
	return -EINVAL;
}

/*
 * A call moves at most this much: the copy runs under the sentry lock, and
 * 1024 local and 1024 remote iovecs over the same 64 MiB would otherwise
 * be 64 GiB of page-sized copies with every other guest stopped. A short
 * count is a partial transfer, which the call's contract allows.
 */
#define PVM_MAX (16UL << 20)

/*
 * Move up to the local iovecs' total between them and the remote ranges of
 * p's memory, a page at a time through the sentry (never a host pointer
 * from the guest): the first unreadable or unwritable page on either side,
 * PVM_MAX or a signal for t ends it. The bytes moved, or -EFAULT if none
 * (process_vm_rw_core).
 */
static long move(struct task *t, struct task *p, const struct iovec *l, size_t ln, size_t ltotal,
		 const struct iovec *rv, size_t rn, bool write)
{
	char buf[PAGE_SIZE];
	size_t pos = 0;

	ltotal = MIN(ltotal, PVM_MAX);
	for (size_t i = 0; i < rn && pos < ltotal && !(pos && signal_pending(t)); i++) {
		uint64_t at = (uint64_t)rv[i].iov_base;
		size_t left = rv[i].iov_len;
		while (left && pos < ltotal) {
			size_t chunk = MIN(MIN(left, PAGE_SIZE - (at & ~PAGE_MASK)), ltotal - pos);
			size_t k;
			if (write) {
				k = iov_move(t, l, ln, pos, buf, chunk, false);
				if (k && copy_to_guest(p->mm, at, buf, k))
					return pos ? (long)pos : -EFAULT;
			} else {
				if (copy_from_guest(p->mm, buf, at, chunk))
					return pos ? (long)pos : -EFAULT;
				k = iov_move(t, l, ln, pos, buf, chunk, true);
			}
			pos += k;
			if (k < chunk)
				return pos ? (long)pos : -EFAULT;
			at += chunk;
			left -= chunk;
		}
	}
	return (long)pos;
}

/*
 * process_vm_readv(2)/process_vm_writev(2): "EINVAL The value of the flags
 * argument is not 0", "EINVAL liovcnt or riovcnt is too large", "EFAULT
 * The memory described by local_iov is outside the caller's accessible
 * address space", "ESRCH No process with ID pid exists", and a partial
 * transfer "if a partial read/write occurs" (page granularity, as Linux).
 */
static long process_vm_rw(struct task *t, const long a[6], bool write)
{
	cleanup_free struct iovec *l = NULL;
	cleanup_free struct iovec *rv = NULL;
	long ltotal, rtotal;

	if (a[5])
		return -EINVAL;
	if ((ltotal = get_iov(t, (uint64_t)a[1], a[2], &l)) < 0)
		return ltotal;
	if (!ltotal)
		return 0;
	if ((rtotal = get_iov(t, (uint64_t)a[3], a[4], &rv)) < 0)
		return rtotal;
	if (!rtotal)
		return 0;
	struct task *p = task_find((int)a[0]);
	if (!p || !p->proc || gone(p))
		return -ESRCH;	/* mm_access() of a task without an mm */
	return move(t, p, l, (size_t)a[2], (size_t)ltotal, rv, (size_t)a[4], write);
}

long sys_process_vm_readv(struct task *t, const long a[6])
{
	return process_vm_rw(t, a, false);
}

long sys_process_vm_writev(struct task *t, const long a[6])
{
	return process_vm_rw(t, a, true);
}
