// SPDX-License-Identifier: GPL-2.0
/*
 * Guest memory access with copy_{from,to}_user semantics: a bad guest
 * pointer yields -EFAULT, never a sentry crash. process_vm_readv/writev
 * honour page protections (no FOLL_FORCE), so writing a read-only guest
 * page fails like a kernel copy_to_user would.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "pvx/mm.h"
#include "sentry/platform/platform.h"

static bool bad_range(uint64_t addr, size_t n)
{
	return addr >= PVX_GUEST_TASK_SIZE || n > PVX_GUEST_TASK_SIZE - addr;
}

/*
 * The calling thread's copy_to_guest_ret whose copy is not done yet: a
 * syscall's last result, left for guest_out_settle to hand to the platform
 * (or to copy). Any other guest memory access by this thread copies it
 * first (out_flush), so every access sees the syscall's writes in order;
 * a failure there stands as the syscall's -EFAULT at the settle.
 */
static __thread struct {
	struct mm *mm;
	uint64_t dst;
	size_t n;		/* 0: none pending */
	size_t shipped;		/* what the last settle handed to the platform, for guest_out_redo */
	bool failed;
	char buf[1536];
} out;

/* Host calls the platform queued (as_batch) run before guest memory is touched: 0 or -EFAULT. */
static long batch_settle(struct mm *mm)
{
	if (!mm->as || !mm->as->batched)
		return 0;
	return mm->as->ops->as_batch(mm->as, AS_BATCH_FLUSH) < 0 ? -EFAULT : 0;
}

static void out_flush(void)
{
	size_t n = out.n;

	if (!n)
		return;
	out.n = 0;
	if (copy_to_guest(out.mm, out.dst, out.buf, n))
		out.failed = true;
}

long copy_to_guest_ret(struct mm *mm, uint64_t dst, const void *src, size_t n, long ret)
{
	out_flush();
	if (mm->as && mm->as->ops->ctx_out && n && n <= sizeof(out.buf) && !bad_range(dst, n)) {
		memcpy(out.buf, src, n);
		out.mm = mm;
		out.dst = dst;
		out.n = n;
		return ret;
	}
	return copy_to_guest(mm, dst, src, n) ?: ret;
}

long guest_out_settle(struct platform_ctx *ctx, long ret, bool resume)
{
	out.shipped = 0;
	if (out.n && resume && ctx && ctx->as == out.mm->as && !ctx->as->ops->ctx_out(ctx, out.dst, out.buf, out.n)) {
		out.shipped = out.n;
		out.n = 0;
	}
	out_flush();
	if (out.failed) {
		out.failed = false;
		return -EFAULT;
	}
	return ret;
}

long guest_out_redo(void)
{
	size_t n = out.shipped;

	out.shipped = 0;
	return n ? copy_to_guest(out.mm, out.dst, out.buf, n) : 0;
}

/*
 * The kernel's own access to a user stack below its VMA grows it, as a
 * fault there does (a read(2) into a large local array not yet touched, a
 * signal frame below the deepest page): once, then the copy is tried again.
 * mm_grow_stack says no unless addr is below a MAP_GROWSDOWN mapping.
 */
long copy_from_guest(struct mm *mm, void *dst, uint64_t src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };

	out_flush();
	if (n == 0)
		return 0;
	if (!mm->as || bad_range(src, n))
		return -EFAULT;	/* no address space: a process that has exited */
	/* Copied by the stub at the trap (seccomp), unless a host call queued since could have changed it. */
	if (!mm->as->batched && mm->as->ops->as_prefetched_in && !mm->as->ops->as_prefetched_in(mm->as, src, dst, n))
		return 0;
	if (batch_settle(mm))
		return -EFAULT;
	if (process_vm_readv(mm->as->pid, &l, 1, &r, 1, 0) == (ssize_t)n)
		return 0;
	return mm_grow_stack(mm, src) && process_vm_readv(mm->as->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

long copy_to_guest(struct mm *mm, uint64_t dst, const void *src, size_t n)
{
	struct iovec l = { (void *)src, n }, r = { (void *)dst, n };

	out_flush();
	if (n == 0)
		return 0;
	if (!mm->as || bad_range(dst, n) || batch_settle(mm))
		return -EFAULT;
	if (process_vm_writev(mm->as->pid, &l, 1, &r, 1, 0) == (ssize_t)n)
		return 0;
	return mm_grow_stack(mm, dst) && process_vm_writev(mm->as->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/*
 * The 32-bit guest word at uaddr (4-aligned) becomes new if it is old;
 * *prev is what it was. Atomic against the guest's own threads where the
 * platform can run the stub's cmpxchg gadget in the guest's mm (see
 * platform.h); where it cannot (no context of the calling thread in mm,
 * e.g. another process's robust-list walk at its death), a read and a
 * write under the sentry lock, atomic only against the sentry's own
 * changes. 0 or -EFAULT, as futex_atomic_cmpxchg_inatomic.
 */
long guest_cmpxchg32(struct mm *mm, uint64_t uaddr, uint32_t old, uint32_t new, uint32_t *prev)
{
	long r;

	out_flush();
	if (!mm->as || bad_range(uaddr, sizeof(old)) || (uaddr & 3) || batch_settle(mm))
		return -EFAULT;
	r = mm->as->ops->as_cmpxchg32 ? mm->as->ops->as_cmpxchg32(mm->as, uaddr, old, new, prev) : -ENOSYS;
	if (r != -ENOSYS && r != -ESRCH)
		return r ? -EFAULT : 0;
	if ((r = copy_from_guest(mm, prev, uaddr, sizeof(*prev))))
		return r;
	return *prev == old ? copy_to_guest(mm, uaddr, &new, sizeof(new)) : 0;
}

/*
 * As much of the guest's src as can be read before its first page that
 * cannot be, into dst: the bytes copied. For a caller whose whole read
 * failed already, so page by page from the start (a stack grows as a
 * fault would).
 */
size_t copy_from_guest_partial(struct mm *mm, void *dst, uint64_t src, size_t n)
{
	size_t done = 0;

	while (done < n) {
		size_t chunk = MIN(n - done, PAGE_SIZE - ((src + done) & ~PAGE_MASK));
		if (copy_from_guest(mm, (char *)dst + done, src + done, chunk))
			break;
		done += chunk;
	}
	return done;
}

/*
 * As much of src as fits before the first guest page that cannot be
 * written. One host call for the whole buffer first: process_vm_writev pins
 * the remote pages in turn and reports how far it got when one fails
 * (mm/process_vm_access.c), so a 64 KiB read costs one call, not sixteen,
 * and a 4 KiB read into an unaligned buffer (two pages) one, not two.
 * Then page by page from there, which also grows a stack as a fault would.
 * A copy within one page goes straight to that loop: it is one call there.
 */
size_t copy_to_guest_partial(struct mm *mm, uint64_t dst, const void *src, size_t n)
{
	size_t done = 0;

	out_flush();
	if ((dst & ~PAGE_MASK) + n > PAGE_SIZE && mm->as && !bad_range(dst, n) && !batch_settle(mm)) {
		struct iovec l = { (void *)src, n }, r = { (void *)dst, n };
		ssize_t k = process_vm_writev(mm->as->pid, &l, 1, &r, 1, 0);
		if (k > 0)
			done = (size_t)k;
	}
	while (done < n) {
		/* Page by page: the first unwritable page ends the copy. */
		size_t chunk = MIN(n - done, PAGE_SIZE - ((dst + done) & ~PAGE_MASK));
		if (copy_to_guest(mm, dst + done, (const char *)src + done, chunk))
			break;
		done += chunk;
	}
	return done;
}

/*
 * See pvx/mm.h. process_vm_readv/writev take the guest's ranges as one
 * remote vector, so readv/writev of several iovecs cost one host call,
 * not one per iovec. Every range is checked as copy_*_guest checks one.
 */
long copy_guest_vec(struct mm *mm, const struct iovec *guest, size_t cnt, void *buf, size_t n, bool to_guest)
{
	struct iovec l = { buf, n };

	out_flush();
	if (!mm->as || cnt > IOV_MAX || batch_settle(mm))
		return -EFAULT;
	for (size_t i = 0; i < cnt; i++)
		if (bad_range((uint64_t)guest[i].iov_base, guest[i].iov_len))
			return -EFAULT;
	ssize_t k = to_guest ? process_vm_writev(mm->as->pid, &l, 1, guest, cnt, 0)
			     : process_vm_readv(mm->as->pid, &l, 1, guest, cnt, 0);
	return k == (ssize_t)n ? 0 : -EFAULT;
}

long clear_guest(struct mm *mm, uint64_t dst, size_t n)
{
	static const char zero[4096];

	while (n) {
		size_t chunk = MIN(n, sizeof(zero));
		long err = copy_to_guest(mm, dst, zero, chunk);
		if (err)
			return err;
		dst += chunk;
		n -= chunk;
	}
	return 0;
}

long strncpy_from_guest(struct mm *mm, char *dst, uint64_t src, size_t max)
{
	size_t done = 0;

	out_flush();
	/* The trapped syscall's path, copied by the stub already (seccomp): no host call. */
	if (mm->as && mm->as->ops->as_prefetched) {
		long n = mm->as->ops->as_prefetched(mm->as, src, dst, max);
		if (n >= 0 && !bad_range(src, (size_t)n + 1))
			return n;
	}

	while (done < max) {
		/* Never cross a page in one read: the next page may be unmapped. */
		size_t chunk = MIN(max - done, PAGE_SIZE - ((src + done) & ~PAGE_MASK));
		long err = copy_from_guest(mm, dst + done, src + done, chunk);
		if (err)
			return err;
		char *nul = memchr(dst + done, 0, chunk);
		if (nul)
			return nul - dst;
		done += chunk;
	}
	return -ENAMETOOLONG;
}
