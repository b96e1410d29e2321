// SPDX-License-Identifier: GPL-2.0
/* Memory syscalls: argument decoding; the work is in mm/mm.c. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/personality.h>

#include "syscalls/syscalls.h"

/* personality(READ_IMPLIES_EXEC): "PROT_READ implies PROT_EXEC" for mmap and mprotect. */
static int read_implies_exec(const struct task *t, int prot)
{
	return (prot & PROT_READ) && (t->proc->personality & READ_IMPLIES_EXEC) ? prot | PROT_EXEC : prot;
}

/* The caller's RLIMIT_AS, RLIMIT_DATA and RLIMIT_STACK for the change it asks (may_expand_vm reads current's). */
static struct mm *limited_mm(struct task *t)
{
	mm_set_rlimits(t->mm, t->proc->rlim);
	return t->mm;
}

long sys_mmap(struct task *t, const long a[6])
{
	int prot = (int)a[2], flags = (int)a[3];
	long host_fd = -1;

	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC | 0x8 /* PROT_SEM */ | PROT_GROWSDOWN | PROT_GROWSUP))
		return -EINVAL;
	prot = read_implies_exec(t, prot);
	if (!(flags & MAP_ANONYMOUS)) {
		struct file *f = fd_lookup(t->files, (int)a[4]);
		if (!f || (f->flags & O_PATH))
			return -EBADF;
		if ((host_fd = file_mmap(f)) < 0)
			return host_fd;
	}
	return mm_mmap(limited_mm(t), (uint64_t)a[0], (uint64_t)a[1], prot & (PROT_READ | PROT_WRITE | PROT_EXEC),
		       flags, (int)host_fd, (uint64_t)a[5]);
}

long sys_munmap(struct task *t, const long a[6])
{
	return mm_munmap(t->mm, (uint64_t)a[0], (uint64_t)a[1]);
}

long sys_mprotect(struct task *t, const long a[6])
{
	return mm_mprotect(limited_mm(t), (uint64_t)a[0], (uint64_t)a[1], read_implies_exec(t, (int)a[2]));
}

long sys_mremap(struct task *t, const long a[6])
{
	return mm_mremap(limited_mm(t), (uint64_t)a[0], (uint64_t)a[1], (uint64_t)a[2], (int)a[3], (uint64_t)a[4]);
}

long sys_brk(struct task *t, const long a[6])
{
	return (long)mm_brk(limited_mm(t), (uint64_t)a[0]);
}

long sys_madvise(struct task *t, const long a[6])
{
	return mm_madvise(t->mm, (uint64_t)a[0], (uint64_t)a[1], (int)a[2]);
}

long sys_mseal(struct task *t, const long a[6])
{
	return mm_mseal(t->mm, (uint64_t)a[0], (uint64_t)a[1], (unsigned long)a[2]);
}

long sys_msync(struct task *t, const long a[6])
{
	return mm_msync(t->mm, (uint64_t)a[0], (uint64_t)a[1], (int)a[2]);
}

long sys_mincore(struct task *t, const long a[6])
{
	return mm_mincore(t->mm, (uint64_t)a[0], (uint64_t)a[1], (uint64_t)a[2]);
}

/* RLIMIT_MEMLOCK in bytes: the guest holds no CAP_IPC_LOCK, so the limit always applies. */
static uint64_t memlock_limit(const struct task *t)
{
	rlim_t l = t->proc->rlim[RLIMIT_MEMLOCK].rlim_cur;

	return l == RLIM_INFINITY ? UINT64_MAX : (uint64_t)l;
}

/* mlock(2): kept in the VMAs (mm/mlock.c), the host's pages are not pinned. */
long sys_mlock(struct task *t, const long a[6])
{
	return mm_mlock(t->mm, (uint64_t)a[0], (uint64_t)a[1], 0, memlock_limit(t));
}

long sys_mlock2(struct task *t, const long a[6])
{
	return mm_mlock(t->mm, (uint64_t)a[0], (uint64_t)a[1], (unsigned)a[2], memlock_limit(t));
}

long sys_munlock(struct task *t, const long a[6])
{
	return mm_munlock(t->mm, (uint64_t)a[0], (uint64_t)a[1]);
}

long sys_mlockall(struct task *t, const long a[6])
{
	return mm_mlockall(t->mm, (int)a[0], memlock_limit(t));
}

long sys_munlockall(struct task *t, const long a[6] __unused)
{
	return mm_munlockall(t->mm);
}

/* remap_file_pages(2): deprecated; emulated as Linux does (mm/mlock.c). */
long sys_remap_file_pages(struct task *t, const long a[6])
{
	return mm_remap_file_pages(t->mm, (uint64_t)a[0], (uint64_t)a[1], (uint64_t)a[2], (uint64_t)a[3], (uint64_t)a[4]);
}
