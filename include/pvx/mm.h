/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's view of its address space (VMAs, brk) and the helpers that
 * touch guest memory. Every guest pointer goes through copy_{from,to}_guest
 * or strncpy_from_guest, which return -EFAULT instead of crashing.
 */
#ifndef PVX_MM_H
#define PVX_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pvx/common.h"
#include "pvx/guest_layout.h"

/*
 * What a VMA maps: a host fd the sentry keeps (a dup of the guest's file, or
 * a memfd for shared anonymous memory), and the identity of its inode, which
 * shared futexes are keyed on as Linux's get_futex_key() keys them.
 */
struct vma_file {
	int refs;
	int fd;
	uint64_t dev, ino;
	uint64_t charge;	/* bytes of the sandbox's memory bound it holds (a memfd's size) */
	bool in_ram;		/* tmpfs, a memfd, hugetlbfs: its pages are memory, not a disk's cache */
	/*
	 * Who else holds it (a System V shm segment, sentry/kernel/shm.c) and
	 * what to tell it when a reference goes but not the last one: its
	 * attach count is refs - 1, as Linux counts shm VMAs.
	 */
	void *owner;
	void (*unref)(struct vma_file *f);
	int pins;	/* of refs, those that are not mappings (held across a remap: mm/mlock.c) */
};

/*
 * A VMA flag of pvx's own, beside the MAP_* ones it records: the mapping
 * may never be made writable (Linux's VM_MAYWRITE clear), as a SHM_RDONLY
 * attachment of a segment whose memfd the sentry holds read-write.
 */
#define PVX_MAP_NOWRITE 0x8000000

struct mpol;
struct vma {
	uint64_t start, end;	/* [start, end), page aligned */
	int prot;
	int flags;		/* MAP_PRIVATE/MAP_SHARED/MAP_ANONYMOUS/... as mapped */
	struct vma_file *file;	/* NULL for private anonymous memory */
	uint64_t off;		/* file offset of start */
	const struct mpol *pol;	/* mbind(2)'s policy (pvx/numa.h), interned; NULL: none (MPOL_DEFAULT) */
};

/* The guest's VMAs, ordered and non-overlapping, in a balanced tree (mm/vma.c). */
struct vma_node;
struct vma_set {
	struct vma_node *root;
	size_t n;
	/* Linux's mm->total_vm and mm->data_vm in bytes: what may_expand_vm holds to RLIMIT_AS and RLIMIT_DATA. */
	uint64_t total_vm, data_vm;
};

/* vm.max_map_count's default: "ENOMEM The process's maximum number of mappings would have been exceeded". */
#define PVX_MAX_MAP_COUNT 65530

/* Pure bookkeeping (mm/vma.c): no host calls, unit tested. Every call is O(log n). */
void vma_set_free(struct vma_set *s);
size_t vma_count(const struct vma_set *s);
const struct vma *vma_lookup(const struct vma_set *s, uint64_t addr);
/* In address order: the lowest VMA, the one after v, the first one ending above addr (NULL: none). */
const struct vma *vma_first(const struct vma_set *s);
const struct vma *vma_next(const struct vma_set *s, const struct vma *v);
const struct vma *vma_first_above(const struct vma_set *s, uint64_t addr);
const struct vma *vma_prev(const struct vma_set *s, const struct vma *v);
/* Every VMA of s in address order; the set must not change inside the loop. */
#define vma_for_each(v, s) for (const struct vma *v = vma_first(s); v; v = vma_next(s, v))
bool vma_range_free(const struct vma_set *s, uint64_t start, uint64_t end);
/* Linux's is_data_mapping(): private, writable, not a stack (VM_GROWSDOWN). */
bool vma_is_data(int prot, int flags);
/* The bytes of [start, end) that are mapped, and of those the data bytes (NULL: not wanted). */
uint64_t vma_range_bytes(const struct vma_set *s, uint64_t start, uint64_t end, uint64_t *data);
bool vma_range_mapped(const struct vma_set *s, uint64_t start, uint64_t end);
/* How many VMAs a change to [start, end) would split (0-2): what it adds to vma_count at most. */
int vma_splits(const struct vma_set *s, uint64_t start, uint64_t end);
/* Highest free gap of len below top and >= bottom; 0 when none. */
uint64_t vma_find_free(const struct vma_set *s, uint64_t len, uint64_t bottom, uint64_t top);
/* What a mapping commits against the sandbox's memory bound (mm/account.c). */
uint64_t vma_charge(int prot, int flags, const struct vma_file *file, uint64_t len);
/* The charge of the parts of [start, end) that are mapped, with prot instead of theirs if prot >= 0. */
uint64_t vma_range_charge(const struct vma_set *s, uint64_t start, uint64_t end, int prot);
/* Takes a new reference to file (may be NULL); merges with neighbours as Linux would. */
long vma_insert(struct vma_set *s, uint64_t start, uint64_t end, int prot, int flags, struct vma_file *file,
		uint64_t off) __must_check;
struct vma_file *vma_file_new(int fd);	/* takes ownership of fd */
void vma_file_put(struct vma_file *f);
long vma_remove(struct vma_set *s, uint64_t start, uint64_t end) __must_check;
long vma_protect(struct vma_set *s, uint64_t start, uint64_t end, int prot) __must_check;
/*
 * mlock's VM_LOCKED and VM_LOCKONFAULT, kept in a VMA's flags above every
 * MAP_ flag the host is given (mm_map_vma passes only known MAP_ flags):
 * the bookkeeping of mlock(2), not a lock of the host's pages.
 */
#define VMA_LOCKED (1 << 30)
#define VMA_LOCKONFAULT (1 << 29)
/* Set [start, end)'s lock bits to lock (0 unlocks; MAP_LOCKED is cleared too); the range must be mapped. */
long vma_set_lock(struct vma_set *s, uint64_t start, uint64_t end, int lock) __must_check;
/* mseal(2)'s VM_SEALED: kept by fork, gone with the mm at execve; never cleared. */
#define VMA_SEALED (1 << 28)
/*
 * madvise(2)'s VM_DONTCOPY (MADV_DONTFORK: the range is left out of a
 * fork's child) and VM_WIPEONFORK (the child gets it zero-filled), kept by
 * fork itself, gone with the mm at execve. The stub's mapping carries the
 * host's own flags too, so a fork by the host honours them (mm/fork.c).
 */
#define VMA_DONTFORK (1 << 27)
#define VMA_WIPEONFORK (1 << 26)
/* Set bits set and clear bits clear of every VMA of the mapped range [start, end), split at its edges. */
long vma_change_flags(struct vma_set *s, uint64_t start, uint64_t end, int clear, int set) __must_check;
/* Seal the mapped range [start, end) (it must be mapped). */
long vma_seal(struct vma_set *s, uint64_t start, uint64_t end) __must_check;
/* mbind(2): the mapped parts of [start, end) get policy pol (pvx/numa.h; NULL: none), split at its edges. */
long vma_set_policy(struct vma_set *s, uint64_t start, uint64_t end, const struct mpol *pol) __must_check;
/* Does any VMA in [start, end) carry VMA_SEALED? */
bool vma_range_sealed(const struct vma_set *s, uint64_t start, uint64_t end);

struct addr_space;
struct mm;
/* mseal(2) on the guest's range (mm/mm.c). */
long mm_mseal(struct mm *mm, uint64_t start, uint64_t len, unsigned long flags) __must_check;

/*
 * A host page, PROT_NONE, at mmap_base, that no guest VMA records
 * (mm/mm.c): it keeps the page tables above the guest's first mappings.
 * mm_keeper_fault says whether a SEGV_ACCERR at addr was met there (a
 * fault the guest meets where nothing of its own is mapped: SEGV_MAPERR).
 */
void mm_keep_tables(struct mm *mm);
bool mm_keeper_fault(struct mm *mm, uint64_t addr);

struct mm {
	struct addr_space *as;
	int users;	/* processes running in it (vfork, CLONE_VM): the last one frees it (sentry/kernel/mm_share.c) */
	struct vma_set vmas;
	uint64_t brk_start, brk_cur;
	uint64_t mmap_base;	/* top-down allocation starts below this */
	uint64_t keeper;	/* the host-only page that keeps the page tables there (mm_keep_tables); 0: none */
	uint64_t stack_top;	/* the main stack's end (randomized at exec) */
	uint64_t env_start, env_end;	/* the environment strings exec put on the stack (/proc/PID/environ) */
	int def_lock;		/* mlockall(MCL_FUTURE): lock bits every new mapping gets (mm/mlock.c) */
	/*
	 * The RLIMIT_AS, RLIMIT_DATA (soft, hard) and RLIMIT_STACK of the
	 * process calling in (mm_set_rlimits), in bytes, UINT64_MAX for none:
	 * rlimits are a process's, the mm may be shared (CLONE_VM), so the
	 * caller's are set before each change, as Linux reads current's.
	 */
	uint64_t rlim_as, rlim_data, rlim_data_max, rlim_stack;
	struct mm_ut *ut;	/* the usertrap's sites (mm/usertrap.c); NULL: none yet */
};

/*
 * The usertrap (mm/usertrap.c, sentry/platform/seccomp_patch.md): guest
 * syscall sites patched to enter the seccomp stub without a signal.
 * mm_ut_consider looks at the site of a syscall that just trapped (regs at
 * the trap); mm_ut_change is told of every change of [start, end) before
 * the host sees it (UT_GONE: unmapped or mapped over; UT_MOVED: mremap to
 * to, after it) or after it (UT_WRITABLE: made writable); mm_ut_fixup
 * takes back a fault met inside a site (a SIGILL while it changed, or at
 * a patched site's syscall or cmp: a restart, a return with a frame; a
 * STUB_UT_READ site's syscall place is a SIGSEGV) (true: *regs and *trap
 * changed, run again); mm_ut_off puts every site back for good (the guest
 * uses its own GS base).
 */
struct pvx_regs;
struct pvx_trap;
enum mm_ut_how { UT_GONE, UT_WRITABLE, UT_MOVED };
void mm_ut_consider(struct mm *mm, const struct pvx_regs *regs);
void mm_ut_change(struct mm *mm, uint64_t start, uint64_t end, enum mm_ut_how how, uint64_t to);
bool mm_ut_fixup(struct mm *mm, struct pvx_regs *regs, struct pvx_trap *trap);
void mm_ut_off(struct mm *mm);
long mm_ut_copy(struct mm *child, const struct mm *parent, bool by_host) __must_check;
void mm_ut_free(struct mm *mm);

/* The caller's limits for the next change of mm: rlim is a process's RLIM_NLIMITS limits. */
struct rlimit;
void mm_set_rlimits(struct mm *mm, const struct rlimit *rlim);
/*
 * A fault at addr below a MAP_GROWSDOWN VMA (the main stack): grow it down
 * to addr as Linux's expand_downwards() does, held to RLIMIT_STACK,
 * RLIMIT_AS, the stack guard gap and the memory bound. True when it grew
 * (the guest runs the faulting instruction again), false for a SIGSEGV.
 */
bool mm_grow_stack(struct mm *mm, uint64_t addr);

/*
 * The sandbox's memory bound (mm/account.c): commit accounting over all
 * address spaces, ENOMEM past the limit, as Linux under overcommit_memory=2.
 */
long mm_set_memory_limit(const char *size) __must_check;	/* --memory=SIZE[K|M|G|T] */
uint64_t mm_memory_limit(void);
uint64_t mm_memory_default(void);
uint64_t mm_committed(void);
long mm_charge(uint64_t bytes) __must_check;
void mm_uncharge(uint64_t bytes);

long mm_init(struct mm *mm, struct addr_space *as) __must_check;
void mm_release(struct mm *mm);
/* The guest's mmap/munmap/mprotect/brk/mremap, applied to the stub. */
long mm_mmap(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, int host_fd,
	     uint64_t off) __must_check;
long mm_munmap(struct mm *mm, uint64_t addr, uint64_t len) __must_check;
long mm_mprotect(struct mm *mm, uint64_t addr, uint64_t len, int prot) __must_check;
long mm_mremap(struct mm *mm, uint64_t old, uint64_t old_len, uint64_t new_len, int flags,
	       uint64_t new_addr) __must_check;
uint64_t mm_brk(struct mm *mm, uint64_t want);
long mm_madvise(struct mm *mm, uint64_t addr, uint64_t len, int advice) __must_check;
long mm_msync(struct mm *mm, uint64_t addr, uint64_t len, int flags) __must_check;
/* mincore(2): the stub writes the residency vector at guest address vec. */
long mm_mincore(struct mm *mm, uint64_t addr, uint64_t len, uint64_t vec) __must_check;
/* Pages of [start, end) in memory, from the stub's pagemap (mm/resident.c); -EIO when it cannot be read. */
long mm_resident(struct mm *mm, uint64_t start, uint64_t end, uint64_t *pages) __must_check;
/*
 * The mlock family (mm/mlock.c), bookkeeping only: lock_limit is
 * RLIMIT_MEMLOCK in bytes (the guest holds no CAP_IPC_LOCK). mlock2's
 * flags are MLOCK_ONFAULT or 0; mlockall's MCL_*.
 */
long mm_mlock(struct mm *mm, uint64_t addr, uint64_t len, unsigned flags, uint64_t lock_limit) __must_check;
long mm_munlock(struct mm *mm, uint64_t addr, uint64_t len) __must_check;
long mm_mlockall(struct mm *mm, int flags, uint64_t lock_limit) __must_check;
long mm_munlockall(struct mm *mm) __must_check;
/* remap_file_pages(2) as Linux emulates it: mmap of the shared file mapping again from pgoff. */
long mm_remap_file_pages(struct mm *mm, uint64_t start, uint64_t size, uint64_t prot, uint64_t pgoff,
			 uint64_t flags) __must_check;
/* Fault in [start, end) as mlock does (MADV_POPULATE_READ/WRITE in the stub); errors ignored. */
void mm_populate(struct mm *mm, uint64_t start, uint64_t end);
/* Bytes of locked VMAs (VmLck). */
uint64_t mm_locked_bytes(const struct mm *mm);
/*
 * fork(2) by the host (platform as_fork): the child's stub has parent's
 * memory already; record parent's VMAs in child (a fresh mm) and charge them.
 */
long mm_inherit(struct mm *child, struct mm *parent) __must_check;
/*
 * fork(2) by the host where the platform can: parent's stub forks itself
 * (called by the forking thread) and child (a fresh mm) records its VMAs.
 * 0 and the child's stub in *as (its first context for the child's thread
 * to ctx_start), 1 when it is not done so (mm_copy is the way), or -errno.
 */
long mm_fork(struct mm *child, struct mm *parent, struct addr_space **as) __must_check;
/* Is fork done by the host where the platform can (not PVX_FORK=copy)? */
bool mm_fork_by_host(void);
/* fork(2): give child (a fresh mm) a copy of parent's memory (mm/fork.c). */
long mm_copy(struct mm *child, struct mm *parent) __must_check;
/* Make parent's private memory readable for mm_copy (undo = false), and back (true). */
long mm_fork_prepare(struct mm *parent, bool undo) __must_check;
/*
 * A shared mapping of file from off (a reference is taken for the VMA) at
 * addr (0: the kernel picks; with MAP_FIXED it replaces what is there):
 * shmat(2), remap_file_pages(2) of a segment.
 */
long mm_mmap_vfile(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags,
		   struct vma_file *file, uint64_t off) __must_check;
/* A memfd of len bytes charged once to the sandbox's bound (shared anonymous memory, shm segments). */
long mm_shmem_file(uint64_t len, struct vma_file **out) __must_check;
/* Map file (NULL: anonymous) at [addr, addr+len) in the stub without recording a VMA. */
long mm_map_vma(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, const struct vma_file *file,
		uint64_t off) __must_check;

/* Guest memory access (mm/uaccess.c): 0 or -EFAULT. */
long copy_from_guest(struct mm *mm, void *dst, uint64_t src, size_t n) __must_check;
long copy_to_guest(struct mm *mm, uint64_t dst, const void *src, size_t n) __must_check;
long clear_guest(struct mm *mm, uint64_t dst, size_t n) __must_check;
/* Copy as much as fits before the first unwritable page; returns the bytes copied. */
/* Atomic 32-bit compare-and-exchange on a guest word: 0 (*prev = the old value) or -EFAULT. */
long guest_cmpxchg32(struct mm *mm, uint64_t uaddr, uint32_t old, uint32_t new, uint32_t *prev) __must_check;
size_t copy_to_guest_partial(struct mm *mm, uint64_t dst, const void *src, size_t n);
/* Copy as much as can be read before the first unreadable guest page; returns the bytes copied. */
size_t copy_from_guest_partial(struct mm *mm, void *dst, uint64_t src, size_t n);
/*
 * One host call between buf and cnt guest ranges laid end to end (their
 * lengths add up to n): 0, or -EFAULT when not all of it moved (the caller
 * falls back to range by range for the exact short count).
 */
struct iovec;
long copy_guest_vec(struct mm *mm, const struct iovec *guest, size_t cnt, void *buf, size_t n, bool to_guest)
	__must_check;
/* Copy a NUL-terminated string; returns its length, -EFAULT or -ENAMETOOLONG. */
long strncpy_from_guest(struct mm *mm, char *dst, uint64_t src, size_t max) __must_check;
/*
 * A syscall's last act on guest memory, its result: copy src to dst and
 * return ret, or -EFAULT, as "return copy_to_guest(...) ?: ret" would, but
 * the copy may be left to the guest thread's own context on its way back
 * (seccomp: no host call). Nothing may follow it in the syscall but the
 * return: the task loop settles it (guest_out_settle) right after the call.
 */
long copy_to_guest_ret(struct mm *mm, uint64_t dst, const void *src, size_t n, long ret) __must_check;
/*
 * After each syscall, by the task loop: ret, or -EFAULT when a copy of
 * copy_to_guest_ret failed. With resume (guest code of ctx runs next, no
 * stop, signal, trace or watch in between) a pending copy goes to the
 * platform for that run (ctx_out); otherwise the sentry copies now.
 */
struct platform_ctx;
long guest_out_settle(struct platform_ctx *ctx, long ret, bool resume) __must_check;
/* The run returned TRAP_OUT_FAULT: the sentry's copy of what was handed over (it grows a stack): 0 or -EFAULT. */
long guest_out_redo(void) __must_check;

#endif
