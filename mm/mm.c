// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's mmap/munmap/mprotect/mremap/brk. The guest's view lives in a
 * vma_set; every change is applied to the stub's real mm through the
 * platform (as_syscall) and recorded only when the host call succeeded.
 */
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "pvx/hostcred.h"
#include "pvx/log.h"
#include "pvx/mm.h"
#include "sentry/platform/platform.h"

/*
 * Memory the commit accounting cannot see (a guest's files in a tmpfs,
 * memfds it writes, page tables) can still press the host: make the stub
 * the host OOM killer's first choice, so that it kills a guest process
 * (SIGKILL, as under a memcg limit), never the sentry or a host process.
 * Best effort: a stub that is not ours to write (not dumpable) keeps 0.
 */
static void oom_victim_first(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", pid);
	int fd = open_privileged(path, O_WRONLY | O_CLOEXEC);	/* the stub's file: root's, not nobody's */
	if (fd < 0)
		return;
	if (write(fd, "1000", 4) != 4)
		pr_debug("%s: %m", path);
	close(fd);
}

long mm_init(struct mm *mm, struct addr_space *as)
{
	*mm = (struct mm){ .as = as, .users = mm->users };	/* who holds the mm does not change */
	mm->mmap_base = PVX_MMAP_BASE;
	mm->stack_top = PVX_STACK_TOP;
	mm->rlim_as = mm->rlim_data = mm->rlim_data_max = mm->rlim_stack = UINT64_MAX;
	if (as && as->pid > 0 && as->pid != getpid() && !as->oom_first) {	/* a stub process, never the sentry */
		oom_victim_first(as->pid);
		as->oom_first = true;	/* an exec in place keeps the process, and so its oom_score_adj */
	}
	return 0;
}

void mm_release(struct mm *mm)
{
	mm_uncharge(vma_range_charge(&mm->vmas, 0, UINT64_MAX, -1));
	vma_set_free(&mm->vmas);
	mm_ut_free(mm);
}

/*
 * A change that makes the sandbox's commitment go from old to new bytes:
 * growth is charged before the host call (ENOMEM past --memory), a
 * shrink is given back once the call succeeded (commit_end).
 */
static long commit_begin(uint64_t old, uint64_t new)
{
	return new > old ? mm_charge(new - old) : 0;
}

static void commit_end(uint64_t old, uint64_t new, bool done)
{
	if (done && new < old)
		mm_uncharge(old - new);
	if (!done && new > old)
		mm_uncharge(new - old);
}

void mm_set_rlimits(struct mm *mm, const struct rlimit *rlim)
{
	mm->rlim_as = rlim[RLIMIT_AS].rlim_cur;	/* RLIM_INFINITY is UINT64_MAX */
	mm->rlim_data = rlim[RLIMIT_DATA].rlim_cur;
	mm->rlim_data_max = rlim[RLIMIT_DATA].rlim_max;
	mm->rlim_stack = rlim[RLIMIT_STACK].rlim_cur;
}

/* Is data_vm + bytes within RLIMIT_DATA (in whole pages, with Linux's "workaround for Valgrind")? */
static bool data_ok(const struct mm *mm, uint64_t bytes)
{
	uint64_t want = mm->vmas.data_vm + bytes;

	if (want <= (mm->rlim_data & PAGE_MASK))
		return true;
	return mm->rlim_data == 0 && want <= (mm->rlim_data_max & PAGE_MASK);
}

/*
 * may_expand_vm(): may the caller's mm grow by bytes of a mapping with prot
 * and flags? RLIMIT_AS holds every mapping, RLIMIT_DATA the private
 * writable ones that are not a stack (is_data_mapping).
 */
static bool may_expand(const struct mm *mm, int prot, int flags, uint64_t bytes)
{
	if (mm->vmas.total_vm + bytes > (mm->rlim_as & PAGE_MASK))
		return false;
	return !vma_is_data(prot, flags) || data_ok(mm, bytes);
}

static long as_call(struct mm *mm, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long a[6] = { a0, a1, a2, a3, a4, a5 };

	return mm->as->ops->as_syscall(mm->as, nr, a);
}

static bool in_guest_range(uint64_t start, uint64_t len)
{
	return start >= PVX_GUEST_MIN && len <= PVX_GUEST_TASK_SIZE && start <= PVX_GUEST_TASK_SIZE - len;
}

/*
 * Linux maps the vDSO first, at the top of the mmap area; the guest's
 * first mappings then go right below it, in page tables that stay. The
 * guest's vDSO here is the host's, above the guest range, and nothing
 * would be left there: a program that maps and unmaps a buffer over and
 * over (find's directory buffers, 18.6k times) made the host allocate
 * and free a PTE, PMD and PUD page each time, and flush for them (mmap
 * 2.3 -> 15 us, munmap 6.9 -> 97 us, against a program that keeps a page
 * there: 7 and 28). So one page of the host's stays at mmap_base: not
 * the guest's (no VMA records it, it is charged nothing), which may map
 * over it as over nothing.
 */
void mm_keep_tables(struct mm *mm)
{
	uint64_t at = mm->mmap_base;

	mm->keeper = 0;
	if (!mm->as || !in_guest_range(at, PAGE_SIZE) || !vma_range_free(&mm->vmas, at, at + PAGE_SIZE))
		return;
	long r = as_call(mm, SYS_mmap, (long)at, PAGE_SIZE, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	if (r == (long)at)
		mm->keeper = at;
}

/* The page gives way to a guest mapping that grows over it in place: the host would not move it. */
static void keeper_yield(struct mm *mm, uint64_t start, uint64_t end)
{
	if (mm->keeper && mm->keeper < end && mm->keeper + PAGE_SIZE > start) {
		if (as_call(mm, SYS_munmap, (long)mm->keeper, PAGE_SIZE, 0, 0, 0, 0) < 0)
			pr_warn("mm: the page at %#lx stays", mm->keeper);
		mm->keeper = 0;
	}
}

bool mm_keeper_fault(struct mm *mm, uint64_t addr)
{
	return mm->keeper && addr - mm->keeper < PAGE_SIZE && !vma_lookup(&mm->vmas, addr);
}

/* Where a non-fixed mapping of len goes: the hint if it is free, else top-down. */
static uint64_t pick_addr(struct mm *mm, uint64_t hint, uint64_t len, int flags)
{
	uint64_t top = flags & MAP_32BIT ? 0x80000000UL : mm->mmap_base;

	hint = PAGE_ALIGN_DOWN(hint);
	if (hint && in_guest_range(hint, len) && vma_range_free(&mm->vmas, hint, hint + len))
		return hint;
	uint64_t addr = vma_find_free(&mm->vmas, len, PVX_GUEST_MIN, top);
	if (!addr && !(flags & MAP_32BIT))	/* below mmap_base is full: try above it */
		addr = vma_find_free(&mm->vmas, len, mm->mmap_base, mm->stack_top - PVX_STACK_SIZE);
	return addr;
}

/*
 * "ENOMEM The process's maximum number of mappings would have been
 * exceeded": vm.max_map_count, counting the VMAs a change would split. It
 * bounds what the sentry keeps per address space, as it bounds the kernel.
 */
static bool too_many_maps(struct mm *mm, uint64_t start, uint64_t end, int adds)
{
	int more = vma_splits(&mm->vmas, start, end) + adds;

	return more && vma_count(&mm->vmas) + more > PVX_MAX_MAP_COUNT;
}

/* What a VMA records of mmap's flags: those that last (VM_* in Linux), so that neighbours merge. */
static int vma_flags(int flags)
{
	int type = (flags & MAP_TYPE) == MAP_PRIVATE ? MAP_PRIVATE : MAP_SHARED;

	return type | (flags & (MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_LOCKED | MAP_NORESERVE | MAP_STACK | PVX_MAP_NOWRITE));
}

#define MAP_KNOWN_FLAGS                                                                       \
	(MAP_SHARED | MAP_PRIVATE | MAP_SHARED_VALIDATE | MAP_ANONYMOUS | MAP_FIXED |          \
	 MAP_FIXED_NOREPLACE | MAP_NORESERVE | MAP_POPULATE | MAP_STACK | MAP_GROWSDOWN |       \
	 MAP_DENYWRITE | MAP_EXECUTABLE | MAP_NONBLOCK | MAP_32BIT | MAP_LOCKED)

/* The host mmap in the stub, MAP_FIXED at addr; file is NULL for anonymous memory. */
long mm_map_vma(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, const struct vma_file *file,
		uint64_t off)
{
	long as_fd = -1, ret;

	if (file) {
		as_fd = mm->as->ops->as_get_fd(mm->as, file->fd);
		if (as_fd < 0)
			return as_fd;
	}
	/* MAP_GROWSDOWN is pvx's to do (mm_grow_stack): the host growing it would go past the VMAs and limits */
	int host_flags = (flags & MAP_KNOWN_FLAGS & ~(MAP_FIXED_NOREPLACE | MAP_32BIT | MAP_GROWSDOWN)) | MAP_FIXED;
	mm_ut_change(mm, addr, addr + len, UT_GONE, 0);
	ret = as_call(mm, SYS_mmap, (long)addr, (long)len, prot, host_flags, as_fd, (long)off);
	if (as_fd >= 0)
		mm->as->ops->as_put_fd(mm->as, as_fd);
	if (ret >= 0 && (uint64_t)ret != addr) {
		pr_err("stub mmap placed %#lx, wanted %#lx", ret, addr);
		return -ENOMEM;
	}
	return ret;
}

/* A vma_file of fd (owned), with its inode's identity; -errno (fd closed) on failure. */
static long new_vma_file(int fd, struct vma_file **out)
{
	struct statfs sf;
	struct stat st;

	if (fstat(fd, &st) < 0) {
		long r = neg_errno();
		close(fd);
		return r;
	}
	bool in_ram = fstatfs(fd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == HUGETLBFS_MAGIC);
	if (!(*out = vma_file_new(fd)))
		return -ENOMEM;
	(*out)->dev = st.st_dev;
	(*out)->ino = st.st_ino;
	(*out)->in_ram = in_ram;
	return 0;
}

/*
 * The file of a mapping of the guest's host_fd at [start, end): the one a
 * neighbouring VMA holds when it is the same open file description (so
 * that the two merge, as on Linux, and a guest mapping a file page by page
 * costs the sentry one fd), else a new dup. A reference for the caller.
 */
/*
 * Are host fds a and b the same open file description? kcmp(2) says; a
 * kernel without it (CONFIG_KCMP off: the test VM's) gets the same file
 * with the same status flags and offset, which two opens of one file may
 * share too: then their mappings merge where Linux's would not.
 */
static bool same_description(int a, int b)
{
	pid_t self = getpid();
	long r = syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);
	struct stat sa, sb;

	if (r >= 0 || errno != ENOSYS)
		return r == 0;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
	       fcntl(a, F_GETFL) == fcntl(b, F_GETFL) && lseek(a, 0, SEEK_CUR) == lseek(b, 0, SEEK_CUR);
}

static long get_vma_file(struct mm *mm, int host_fd, uint64_t start, uint64_t end, struct vma_file **out)
{
	const struct vma *next[2] = { vma_lookup(&mm->vmas, start - 1), vma_lookup(&mm->vmas, end) };

	for (int i = 0; i < 2; i++) {
		struct vma_file *f = next[i] ? next[i]->file : NULL;
		if (f && same_description(f->fd, host_fd)) {
			f->refs++;
			*out = f;
			return 0;
		}
	}
	int fd = fcntl(host_fd, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? neg_errno() : new_vma_file(fd, out);
}

/* The memfd behind a shared anonymous mapping (or a shm segment) of len bytes. */
long mm_shmem_file(uint64_t len, struct vma_file **out)
{
	long r = mm_charge(len);	/* its pages, once, however many map it */

	if (r)
		return r;
	int fd = memfd_create("pvx-shmem", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
		r = neg_errno();
		if (fd >= 0)
			close(fd);
	} else {
		r = new_vma_file(fd, out);	/* closes fd on failure */
	}
	if (r) {
		mm_uncharge(len);
		return r;
	}
	(*out)->charge = len;
	return 0;
}

static long map_new(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, int host_fd, uint64_t off);
static long map_file(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, struct vma_file *file,
		     uint64_t off);

/* mmap(2): "If addr is NULL, the kernel chooses the (page-aligned) address". */
long mm_mmap(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, int host_fd,
	     uint64_t off)
{
	int type = flags & MAP_TYPE;

	flags &= ~PVX_MAP_NOWRITE;	/* not the guest's to set */

	if (len == 0 || (off & ~PAGE_MASK))
		return -EINVAL;
	if (type != MAP_PRIVATE && type != MAP_SHARED && type != MAP_SHARED_VALIDATE)
		return -EINVAL;
	if (type == MAP_SHARED_VALIDATE && (flags & ~MAP_KNOWN_FLAGS))
		return -EOPNOTSUPP;
	if (len > PVX_GUEST_TASK_SIZE)
		return -ENOMEM;
	len = PAGE_ALIGN_UP(len);
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (addr & ~PAGE_MASK)
			return -EINVAL;
		if (!in_guest_range(addr, len))
			return -ENOMEM;
		if ((flags & MAP_FIXED_NOREPLACE) && !(flags & MAP_FIXED) &&
		    !vma_range_free(&mm->vmas, addr, addr + len))
			return -EEXIST;
		if (vma_range_sealed(&mm->vmas, addr, addr + len))
			return -EPERM;	/* mseal(2): "modifying a VMA via mmap(MAP_FIXED)" */
	} else {
		addr = pick_addr(mm, addr, len, flags);
		if (!addr)
			return -ENOMEM;
	}
	if (too_many_maps(mm, addr, addr + len, 1))
		return -ENOMEM;
	return map_new(mm, addr, len, prot, flags, host_fd, off);
}

/* mm_mmap once the place is chosen: the file the VMA keeps, the charge, the host call, the record. */
static long map_new(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, int host_fd, uint64_t off)
{
	long ret;

	/*
	 * The VMA keeps the file so fork can map it again: a dup of the guest's
	 * host fd, or for shared anonymous memory a memfd, so that parent and
	 * child really share it.
	 */
	struct vma_file *file = NULL;
	if (!(flags & MAP_ANONYMOUS)) {
		ret = get_vma_file(mm, host_fd, addr, addr + len, &file);
		if (ret)
			return ret;
	} else if ((flags & MAP_TYPE) != MAP_PRIVATE) {
		ret = mm_shmem_file(len, &file);
		if (ret)
			return ret;
		flags &= ~MAP_ANONYMOUS;
		off = 0;
	}
	ret = map_file(mm, addr, len, prot, flags, file, off);
	vma_file_put(file);
	return ret;
}

/* Map file (NULL: anonymous) at addr, charged and recorded; addr or -errno. */
static long map_file(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, struct vma_file *file,
		     uint64_t off)
{
	/* mmap_region(): what it replaces goes first, so only the rest counts against the limits */
	if (!may_expand(mm, prot, vma_flags(flags), len - vma_range_bytes(&mm->vmas, addr, addr + len, NULL)))
		return -ENOMEM;
	uint64_t old = vma_range_charge(&mm->vmas, addr, addr + len, -1);
	uint64_t new = vma_charge(prot, vma_flags(flags), file, len);
	long ret = commit_begin(old, new);
	if (!ret)
		ret = mm_map_vma(mm, addr, len, prot, flags, file, off);
	if (ret >= 0 && (vma_remove(&mm->vmas, addr, addr + len) ||
			 vma_insert(&mm->vmas, addr, addr + len, prot, vma_flags(flags) | mm->def_lock, file, off)))
		ret = -ENOMEM;
	commit_end(old, new, ret >= 0);
	return ret < 0 ? ret : (long)addr;
}

long mm_mmap_vfile(struct mm *mm, uint64_t addr, uint64_t len, int prot, int flags, struct vma_file *file,
		   uint64_t off)
{
	if (len == 0 || len > PVX_GUEST_TASK_SIZE || (off & ~PAGE_MASK))
		return -EINVAL;
	len = PAGE_ALIGN_UP(len);
	flags = (flags & ~MAP_TYPE) | MAP_SHARED;
	if (flags & MAP_FIXED) {
		if (addr & ~PAGE_MASK)
			return -EINVAL;
		if (!in_guest_range(addr, len))
			return -ENOMEM;
		if (vma_range_sealed(&mm->vmas, addr, addr + len))
			return -EPERM;
	} else if (!(addr = pick_addr(mm, addr, len, flags))) {
		return -ENOMEM;
	}
	if (too_many_maps(mm, addr, addr + len, 1))
		return -ENOMEM;
	return map_file(mm, addr, len, prot, flags, file, off);
}

long mm_munmap(struct mm *mm, uint64_t addr, uint64_t len)
{
	if ((addr & ~PAGE_MASK) || len == 0)
		return -EINVAL;
	len = PAGE_ALIGN_UP(len);
	if (!in_guest_range(addr, len))
		return -EINVAL;
	if (vma_range_sealed(&mm->vmas, addr, addr + len))
		return -EPERM;	/* mseal(2) */
	if (too_many_maps(mm, addr, addr + len, 0))
		return -ENOMEM;
	uint64_t old = vma_range_charge(&mm->vmas, addr, addr + len, -1);
	mm_ut_change(mm, addr, addr + len, UT_GONE, 0);
	long ret = as_call(mm, SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0);
	if (ret < 0)
		return ret;
	commit_end(old, 0, true);
	return vma_remove(&mm->vmas, addr, addr + len);
}

/*
 * mprotect_fixup(): memory that turns into data (private, made writable)
 * must fit RLIMIT_DATA, unless RLIMIT_AS refuses it anyway (Linux fails
 * only when the new flags are refused and the old ones would not be).
 */
static bool data_limit_ok(struct mm *mm, uint64_t start, uint64_t end, int prot)
{
	uint64_t more = 0;

	for (const struct vma *v = vma_first_above(&mm->vmas, start); v && v->start < end; v = vma_next(&mm->vmas, v)) {
		uint64_t n = MIN(v->end, end) - MAX(v->start, start);
		if (vma_is_data(prot, v->flags) && !vma_is_data(v->prot, v->flags) &&
		    mm->vmas.total_vm + n <= (mm->rlim_as & PAGE_MASK))
			more += n;
	}
	return !more || data_ok(mm, more);
}

/* mprotect(2): "ENOMEM ... the range contains unmapped pages". */
long mm_mprotect(struct mm *mm, uint64_t addr, uint64_t len, int prot)
{
	if (addr & ~PAGE_MASK)
		return -EINVAL;
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN | PROT_GROWSUP))
		return -EINVAL;
	prot &= PROT_READ | PROT_WRITE | PROT_EXEC;
	len = PAGE_ALIGN_UP(len);
	if (len == 0)
		return 0;
	if (in_guest_range(addr, len) && vma_range_sealed(&mm->vmas, addr, addr + len))
		return -EPERM;	/* mseal(2), checked before the range (can_modify_mm) */
	if (!in_guest_range(addr, len) || !vma_range_mapped(&mm->vmas, addr, addr + len) ||
	    too_many_maps(mm, addr, addr + len, 0))
		return -ENOMEM;
	/* "EACCES ... a MAP_SHARED mapping of a file opened read-only" and its kin (VM_MAYWRITE) */
	for (const struct vma *v = vma_first_above(&mm->vmas, addr); (prot & PROT_WRITE) && v && v->start < addr + len;
	     v = vma_next(&mm->vmas, v))
		if (v->flags & PVX_MAP_NOWRITE)
			return -EACCES;
	if (!data_limit_ok(mm, addr, addr + len, prot))
		return -ENOMEM;
	uint64_t old = vma_range_charge(&mm->vmas, addr, addr + len, -1);
	uint64_t new = vma_range_charge(&mm->vmas, addr, addr + len, prot);
	long ret = commit_begin(old, new);
	if (!ret)
		ret = as_call(mm, SYS_mprotect, (long)addr, (long)len, prot, 0, 0, 0);
	commit_end(old, new, ret >= 0);
	if (ret < 0)
		return ret;
	if (prot & PROT_WRITE)	/* code the guest may write is its own again */
		mm_ut_change(mm, addr, addr + len, UT_WRITABLE, 0);
	return vma_protect(&mm->vmas, addr, addr + len, prot);
}

/* Move or resize [old, old+old_len) with the host's mremap, at a place we chose. */
static long remap_to(struct mm *mm, const struct vma *v, uint64_t old, uint64_t old_len,
		     uint64_t new_len, uint64_t to)
{
	struct vma keep = *v;	/* v dies with the removal below: hold its file */
	long ret;

	if (too_many_maps(mm, old, old + old_len, 1 + vma_splits(&mm->vmas, to, to + new_len)))
		return -ENOMEM;
	/* vma_to_resize(): growth is held to RLIMIT_AS and RLIMIT_DATA once the destination is unmapped */
	if (new_len > old_len) {
		uint64_t data, total = to != old ? vma_range_bytes(&mm->vmas, to, to + new_len, &data) : 0;
		struct mm lim = *mm;
		lim.vmas.total_vm -= total;
		lim.vmas.data_vm -= to != old ? data : 0;
		if (!may_expand(&lim, v->prot, v->flags, new_len - old_len))
			return -ENOMEM;
	}
	/* What goes: the old range and, moving, what the new one replaces; what comes: the new range. */
	uint64_t was = vma_range_charge(&mm->vmas, old, old + old_len, -1) +
		       (to != old ? vma_range_charge(&mm->vmas, to, to + new_len, -1) : 0);
	uint64_t will = vma_charge(keep.prot, keep.flags, keep.file, new_len);
	if ((ret = commit_begin(was, will)))
		return ret;
	if (keep.file)
		keep.file->refs++;
	keep.off += old - v->start;
	if (to == old) {
		ret = as_call(mm, SYS_mremap, (long)old, (long)old_len, (long)new_len, 0, 0, 0);
	} else {
		mm_ut_change(mm, to, to + new_len, UT_GONE, 0);
		ret = as_call(mm, SYS_mremap, (long)old, (long)old_len, (long)new_len,
			      MREMAP_MAYMOVE | MREMAP_FIXED, (long)to, 0);
		if (ret >= 0)
			mm_ut_change(mm, old, old + old_len, UT_MOVED, to);
	}
	if (ret >= 0 && (vma_remove(&mm->vmas, old, old + old_len) || vma_remove(&mm->vmas, to, to + new_len) ||
	    vma_insert(&mm->vmas, to, to + new_len, keep.prot, keep.flags, keep.file, keep.off) ||
	    (keep.pol && vma_set_policy(&mm->vmas, to, to + new_len, keep.pol))))	/* the mbind policy moves with it */
		ret = -ENOMEM;
	commit_end(was, will, ret >= 0);
	vma_file_put(keep.file);
	return ret < 0 ? ret : (long)to;
}

/* mremap(2) with MREMAP_MAYMOVE and MREMAP_FIXED; one VMA at a time, as Linux. */
long mm_mremap(struct mm *mm, uint64_t old, uint64_t old_len, uint64_t new_len, int flags,
	       uint64_t new_addr)
{
	if ((old & ~PAGE_MASK) || (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED)) ||
	    ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE)))
		return -EINVAL;
	/* PAGE_ALIGN of a length within a page of 2^64 is 0: "a zero new-len is nonsensical" (EINVAL) */
	old_len = PAGE_ALIGN_UP(old_len);
	new_len = PAGE_ALIGN_UP(new_len);
	if (new_len == 0)
		return -EINVAL;
	const struct vma *v = vma_lookup(&mm->vmas, old);
	if (!v)
		return -EFAULT;
	if (v->flags & VMA_SEALED)
		return -EPERM;	/* mseal(2): a sealed source (can_modify_vma) */
	if (old_len == 0)	/* duplicating a shared mapping: not supported; a private one is EINVAL on Linux too */
		return -EINVAL;
	if (flags & MREMAP_FIXED) {
		/* mremap_to(): the destination's checks (Linux's unsigned arithmetic: no wrap to 0 gets through) */
		if ((new_addr & ~PAGE_MASK) || !in_guest_range(new_addr, new_len))
			return -EINVAL;
		if (old + old_len > new_addr && new_addr + new_len > old)
			return -EINVAL;
		if (vma_range_sealed(&mm->vmas, new_addr, new_addr + new_len))
			return -EPERM;	/* do_munmap() of a sealed destination */
		if (old_len > new_len) {	/* mremap_to(): the tail goes first (EPERM if sealed), then the rest moves */
			long err = mm_munmap(mm, old + new_len, old_len - new_len);
			if (err)
				return err;
			old_len = new_len;
			if (!(v = vma_lookup(&mm->vmas, old)))
				return -EFAULT;
		}
		if (old_len > v->end - old)	/* vma_to_resize(): "can't remap across vm area boundaries" */
			return -EFAULT;
		return remap_to(mm, v, old, old_len, new_len, new_addr);
	}
	if (new_len <= old_len) {	/* "Always allow a shrinking remap": the tail is unmapped, its checks are munmap's */
		if (new_len < old_len) {
			long err = mm_munmap(mm, old + new_len, old_len - new_len);
			if (err)
				return err;
		}
		return (long)old;
	}
	if (old_len > v->end - old)	/* never old + old_len: it may wrap */
		return -EFAULT;
	if (in_guest_range(old, new_len) && vma_range_free(&mm->vmas, old + old_len, old + new_len)) {
		keeper_yield(mm, old + old_len, old + new_len);
		return remap_to(mm, v, old, old_len, new_len, old);
	}
	if (!(flags & MREMAP_MAYMOVE))
		return -ENOMEM;
	uint64_t to = pick_addr(mm, 0, new_len, 0);
	return to ? remap_to(mm, v, old, old_len, new_len, to) : -ENOMEM;
}

/* brk(2): returns the new break, or the old one when it cannot move. */
uint64_t mm_brk(struct mm *mm, uint64_t want)
{
	uint64_t old_end = PAGE_ALIGN_UP(mm->brk_cur), new_end = PAGE_ALIGN_UP(want);

	if (want < mm->brk_start || want >= PVX_GUEST_TASK_SIZE)
		return mm->brk_cur;
	/* check_data_rlimit(): the break's span (pvx records no data segment apart) within RLIMIT_DATA */
	if (mm->rlim_data != UINT64_MAX && want - mm->brk_start > mm->rlim_data)
		return mm->brk_cur;
	if (new_end > old_end) {
		if (!vma_range_free(&mm->vmas, old_end, new_end))
			return mm->brk_cur;
		long r = mm_mmap(mm, old_end, new_end - old_end, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (r < 0)
			return mm->brk_cur;
	} else if (new_end < old_end) {
		if (mm_munmap(mm, new_end, old_end - new_end) < 0)
			return mm->brk_cur;
	}
	mm->brk_cur = want;
	return want;
}

/*
 * mseal(2): "destructive madvice() behaviors (e.g. MADV_DONTNEED) for
 * anonymous memory, when users don't have write permission to the memory"
 * are refused on a sealed VMA (is_ro_anon: private and not writable).
 */
static bool discard_sealed(struct mm *mm, uint64_t start, uint64_t end)
{
	for (const struct vma *v = vma_first_above(&mm->vmas, start); v && v->start < end; v = vma_next(&mm->vmas, v))
		if ((v->flags & VMA_SEALED) && !(v->prot & PROT_WRITE) && (v->flags & MAP_TYPE) == MAP_PRIVATE)
			return true;
	return false;
}

/*
 * mseal(2): flags must be 0, start page aligned, the range (len rounded up
 * to pages, not wrapping) wholly mapped (ENOMEM); its VMAs are sealed for
 * good: munmap, mremap, mmap(MAP_FIXED) over them, mprotect and discarding
 * read-only private memory say EPERM.
 */
long mm_mseal(struct mm *mm, uint64_t start, uint64_t len, unsigned long flags)
{
	if (flags || (start & ~PAGE_MASK))
		return -EINVAL;
	uint64_t alen = PAGE_ALIGN_UP(len);
	if (alen < len || start + alen < start)
		return -EINVAL;
	if (!alen)
		return 0;
	if (!in_guest_range(start, alen) || !vma_range_mapped(&mm->vmas, start, start + alen))
		return -ENOMEM;
	if (too_many_maps(mm, start, start + alen, 0))
		return -ENOMEM;
	return vma_seal(&mm->vmas, start, start + alen);
}

/*
 * madvise_update_vma()'s fork advice: MADV_DONTFORK/MADV_DOFORK set and
 * clear VM_DONTCOPY, MADV_WIPEONFORK/MADV_KEEPONFORK VM_WIPEONFORK, which
 * "is only supported on anonymous memory": EINVAL for a file or shared
 * VMA. Linux stops at such a VMA having changed those before it; here
 * nothing changes. As madvise_walk_vmas(), the mapped parts of a range
 * with holes are changed and the answer is ENOMEM (ENOMEM alone when
 * nothing is mapped there). The stub's mapping gets the advice too (a fork
 * by the host honours it), then the VMAs record it.
 */
static long fork_advice(struct mm *mm, uint64_t start, uint64_t end, int advice)
{
	static const struct { int advice, clear, set; } bits[] = {
		{ MADV_DONTFORK, 0, VMA_DONTFORK }, { MADV_DOFORK, VMA_DONTFORK, 0 },
		{ MADV_WIPEONFORK, 0, VMA_WIPEONFORK }, { MADV_KEEPONFORK, VMA_WIPEONFORK, 0 },
	};
	int clear = 0, set = 0;

	for (size_t i = 0; i < ARRAY_SIZE(bits); i++)
		if (bits[i].advice == advice)
			clear = bits[i].clear, set = bits[i].set;
	if (advice == MADV_WIPEONFORK)
		for (const struct vma *v = vma_first_above(&mm->vmas, start); v && v->start < end; v = vma_next(&mm->vmas, v))
			if (v->file || (v->flags & MAP_TYPE) != MAP_PRIVATE)
				return -EINVAL;
	const struct vma *first = vma_first_above(&mm->vmas, start);
	if (!first || first->start >= end || too_many_maps(mm, start, end, 0))
		return -ENOMEM;
	bool holes = !vma_range_mapped(&mm->vmas, start, end);
	long r = as_call(mm, SYS_madvise, (long)start, (long)(end - start), advice, 0, 0, 0);
	if (r < 0 && !(r == -ENOMEM && holes))
		return r;
	r = vma_change_flags(&mm->vmas, start, end, clear, set);
	return r < 0 ? r : holes ? -ENOMEM : 0;
}

/* madvise(2): advice that only concerns the guest's own pages is passed on. */
long mm_madvise(struct mm *mm, uint64_t addr, uint64_t len, int advice)
{
	switch (advice) {
	case MADV_NORMAL: case MADV_RANDOM: case MADV_SEQUENTIAL: case MADV_WILLNEED:
	case MADV_DONTNEED: case MADV_FREE: case MADV_DONTDUMP: case MADV_DODUMP:
	case MADV_HUGEPAGE: case MADV_NOHUGEPAGE: case MADV_COLD: case MADV_PAGEOUT:
	case MADV_DONTFORK: case MADV_DOFORK: case MADV_WIPEONFORK: case MADV_KEEPONFORK:
		break;
	default:
		return -EINVAL;	/* MADV_HWPOISON and friends never reach the host */
	}
	if (addr & ~PAGE_MASK)
		return -EINVAL;
	len = PAGE_ALIGN_UP(len);
	if (len == 0)
		return 0;
	if (!in_guest_range(addr, len))
		return -ENOMEM;
	if (advice == MADV_DONTFORK || advice == MADV_DOFORK || advice == MADV_WIPEONFORK || advice == MADV_KEEPONFORK)
		return fork_advice(mm, addr, addr + len, advice);
	if (!vma_range_mapped(&mm->vmas, addr, addr + len))
		return -ENOMEM;
	if ((advice == MADV_DONTNEED || advice == MADV_FREE) && discard_sealed(mm, addr, addr + len))
		return -EPERM;
	return as_call(mm, SYS_madvise, (long)addr, (long)len, advice, 0, 0, 0);
}

/*
 * msync(2) runs in the stub, whose mm below PVX_GUEST_TASK_SIZE holds just
 * the guest's VMAs: the host syncs what the guest mapped and finds the same
 * holes (ENOMEM). "EINVAL addr is not a multiple of PAGESIZE; or any bit
 * other than MS_ASYNC | MS_INVALIDATE | MS_SYNC is set in flags; or both
 * MS_SYNC and MS_ASYNC are set" comes first, as in Linux.
 */
long mm_msync(struct mm *mm, uint64_t addr, uint64_t len, int flags)
{
	if ((flags & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC)) || (addr & ~PAGE_MASK) ||
	    ((flags & MS_ASYNC) && (flags & MS_SYNC)))
		return -EINVAL;
	len = PAGE_ALIGN_UP(len);	/* wraps to 0 for a huge len, as Linux's does: a no-op */
	if (len == 0)
		return 0;
	if (!in_guest_range(addr, len))
		return -ENOMEM;
	long r = as_call(mm, SYS_msync, (long)addr, (long)len, flags, 0, 0, 0);
	/* "ENOMEM: the indicated memory (or part of it) was not mapped": the guest's, not the host's (mm_keep_tables) */
	return !r && !vma_range_mapped(&mm->vmas, addr, addr + len) ? -ENOMEM : r;
}

/*
 * mincore(2) runs in the stub too, and the host writes the vector straight
 * into guest memory (the call runs in the guest's mm on every platform).
 * Linux's order: EINVAL for an unaligned addr, ENOMEM for a range and
 * EFAULT for a vector beyond user space, then "ENOMEM addr to addr + length
 * contained unmapped memory" or EFAULT when the vector cannot be written.
 * A vector that reaches into the stub, above the guest's range, is refused
 * here as unwritable guest memory; the host finds every other bad one.
 */
long mm_mincore(struct mm *mm, uint64_t addr, uint64_t len, uint64_t vec)
{
	const uint64_t user_top = 1UL << 47;	/* x86-64 user space, as access_ok sees it */

	if (addr & ~PAGE_MASK)
		return -EINVAL;
	if (len > user_top || addr > user_top - len)
		return -ENOMEM;
	uint64_t pages = PAGE_ALIGN_UP(len) / PAGE_SIZE;
	if (vec > user_top - pages)
		return -EFAULT;
	if (pages == 0)
		return 0;
	if (!in_guest_range(addr, pages * PAGE_SIZE))
		return -ENOMEM;
	bool mapped = vma_range_mapped(&mm->vmas, addr, addr + pages * PAGE_SIZE);
	if (vec > PVX_GUEST_TASK_SIZE - pages)
		return mapped ? -EFAULT : -ENOMEM;
	if (!mapped)	/* the host may have pages there that are not the guest's (mm_keep_tables, the usertrap's table) */
		return -ENOMEM;
	return as_call(mm, SYS_mincore, (long)addr, (long)len, (long)vec, 0, 0, 0);
}

/*
 * See pvx/mm.h: what mlock's populate does (__mm_populate), with the host's
 * MADV_POPULATE_WRITE on private writable memory and MADV_POPULATE_READ on
 * the rest; PROT_NONE is skipped and failures (a file's hole past its end)
 * are ignored, as mlock ignores them.
 */
void mm_populate(struct mm *mm, uint64_t start, uint64_t end)
{
	for (const struct vma *v = vma_first_above(&mm->vmas, start); v && v->start < end;
	     v = vma_first_above(&mm->vmas, v->end)) {
		uint64_t s = MAX(v->start, start), e = MIN(v->end, end);
		bool private_w = (v->prot & PROT_WRITE) && (v->flags & MAP_TYPE) == MAP_PRIVATE;
		if (!(v->prot & (PROT_READ | PROT_WRITE | PROT_EXEC)))
			continue;
		if (as_call(mm, SYS_madvise, (long)s, (long)(e - s), private_w ? 23 : 22, 0, 0, 0) < 0)
			pr_debug("mlock: populating %#lx-%#lx failed", (unsigned long)s, (unsigned long)e);
	}
}

/* Linux's stack_guard_gap: 256 pages kept free below a growing stack. */
#define STACK_GUARD_GAP (256UL * PAGE_SIZE)

/* Pages a stack grows by at least, where its limit and the guard gap allow: fewer traps than one a page. */
#define STACK_GROW_MIN (32 * PAGE_SIZE)

/* Grow v down to addr (v's file and flags); false when a limit or the memory bound refuses it. */
static bool grow_to(struct mm *mm, const struct vma *v, uint64_t addr)
{
	int flags = (v->flags & ~(VMA_LOCKED | VMA_LOCKONFAULT | VMA_SEALED)) | MAP_FIXED;

	/* map_file checks RLIMIT_AS (a stack is not data) and charges the memory bound; it merges with v */
	return map_file(mm, addr, v->start - addr, v->prot, flags, NULL, 0) >= 0;
}

/* See pvx/mm.h: expand_downwards() and acct_stack_growth(). */
bool mm_grow_stack(struct mm *mm, uint64_t addr)
{
	addr = PAGE_ALIGN_DOWN(addr);
	const struct vma *v = vma_first_above(&mm->vmas, addr);
	if (!v || v->start <= addr || !(v->flags & MAP_GROWSDOWN) || v->file || (v->flags & VMA_SEALED) ||
	    addr < PVX_GUEST_MIN)
		return false;
	const struct vma *prev = vma_prev(&mm->vmas, v);
	uint64_t low = PVX_GUEST_MIN;	/* the lowest the stack may reach: the guard gap above prev, the limit */
	if (prev && !(prev->flags & MAP_GROWSDOWN) && (prev->prot & (PROT_READ | PROT_WRITE | PROT_EXEC)))
		low = prev->end > UINT64_MAX - STACK_GUARD_GAP ? UINT64_MAX : prev->end + STACK_GUARD_GAP;
	if (mm->rlim_stack < v->end)	/* "Stack limit test": the size may not pass RLIMIT_STACK */
		low = MAX(low, PAGE_ALIGN_UP(v->end - mm->rlim_stack));
	if (addr < low)
		return false;
	/* a few pages more than the fault asked, where that fits; the fault's own page if only that does */
	uint64_t more = v->start - low > STACK_GROW_MIN ? v->start - STACK_GROW_MIN : low;
	if (more < addr && grow_to(mm, v, MAX(more, low)))
		return true;
	v = vma_first_above(&mm->vmas, addr);	/* a failed map_file leaves the set as it was */
	bool grew = grow_to(mm, v, addr);
	if (!grew)
		pr_debug("stack growth to %#lx refused", (unsigned long)addr);
	return grew;
}
