// SPDX-License-Identifier: GPL-2.0
/*
 * Linux AIO contexts (fs/aio.c's kioctx). A context belongs to one address
 * space; its aio_context_t is, as on Linux, the guest address of its ring:
 * here a read-only anonymous mapping of the size Linux's ring would have,
 * left all zero. The sentry keeps the events itself, so the ring header's
 * magic is 0, never AIO_RING_MAGIC, and libaio's user-space fast path
 * ("ring->magic != AIO_RING_MAGIC: goto do_syscall") always asks the
 * kernel. io_destroy unmaps it as kill_ioctx() does.
 *
 * Requests complete when submitted, so a context holds events only; a slot
 * is taken by a request from its submission until io_getevents reaps its
 * event, as Linux's reqs_available counts (nr_events - 1 of the ring). The
 * nr_events the guest asked for counts against fs.aio-max-nr.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/aio.h"
#include "pvx/kernel.h"
#include "pvx/mm.h"
#include "pvx/timer.h"

#define AIO_RING_HDR 32	/* sizeof(struct aio_ring) */

struct aio_ctx {
	struct aio_ctx *next;
	struct mm *mm;		/* the address space it belongs to */
	uint64_t id;		/* the ring's guest address: the aio_context_t */
	uint64_t ring_len;
	unsigned max_reqs;	/* io_setup's nr_events: fs.aio-nr's share */
	unsigned nr_events;	/* the ring's entries */
	unsigned in_use;	/* slots taken: requests submitted and not yet reaped */
	struct io_event *ev;	/* completed events, oldest at head */
	unsigned head, count, cap;
	bool dead;		/* io_destroy'ed: freed when the last waiter leaves */
	int waiters;
};

static struct aio_ctx *contexts;
static unsigned long aio_total;	/* fs.aio-nr */

unsigned long aio_nr(void)
{
	return aio_total;
}

static void ctx_free(struct aio_ctx *c)
{
	mm_uncharge((uint64_t)c->cap * sizeof(struct io_event));
	free(c->ev);
	free(c);
}

/* Out of the list, its aio-nr share given back, waiters told (they see dead); freed once none is left. */
static void ctx_kill(struct aio_ctx *c)
{
	for (struct aio_ctx **p = &contexts; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	aio_total -= c->max_reqs;
	c->dead = true;
	if (!c->waiters)
		ctx_free(c);
	sentry_wake_all();
}

/* aio_setup_ring()'s sizes: nr_events as ioctx_alloc() grows it, the ring's pages to hold that many. */
static void ring_size(unsigned nr, unsigned *entries, uint64_t *len)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t n = MAX((uint64_t)nr, (uint64_t)(cpus > 0 ? cpus : 1) * 4) * 2;
	uint64_t bytes = PAGE_ALIGN_UP(AIO_RING_HDR + n * sizeof(struct io_event));

	*len = bytes;
	*entries = (unsigned)((bytes - AIO_RING_HDR) / sizeof(struct io_event));
}

/*
 * ioctx_alloc(): "nr_events too high" is EINVAL; more than fs.aio-max-nr,
 * alone or with the contexts that exist, is EAGAIN.
 */
long aio_setup(struct task *t, unsigned nr_events, uint64_t *id)
{
	if (nr_events > 0x10000000U / sizeof(struct io_event) / 2)
		return -EINVAL;
	if (nr_events > PVX_AIO_MAX_NR || aio_total + nr_events > PVX_AIO_MAX_NR)
		return -EAGAIN;
	struct aio_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ring_size(nr_events, &c->nr_events, &c->ring_len);
	long addr = mm_mmap(t->mm, 0, c->ring_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr < 0) {
		free(c);
		return addr == -ENOMEM ? -EAGAIN : addr;	/* aio_setup_ring's failure */
	}
	c->mm = t->mm;
	c->id = (uint64_t)addr;
	c->max_reqs = nr_events;
	c->next = contexts;
	contexts = c;
	aio_total += nr_events;
	*id = c->id;
	return 0;
}

struct aio_ctx *aio_lookup(struct task *t, uint64_t id)
{
	for (struct aio_ctx *c = contexts; c; c = c->next)
		if (c->mm == t->mm && c->id == id)
			return c;
	return NULL;
}

/* kill_ioctx(): its events are dropped and its ring unmapped (whatever the guest left there, as Linux's vm_munmap). */
long aio_destroy(struct task *t, uint64_t id)
{
	struct aio_ctx *c = aio_lookup(t, id);

	if (!c)
		return -EINVAL;
	(void)!mm_munmap(t->mm, c->id, c->ring_len);
	ctx_kill(c);
	return 0;
}

void aio_mm_gone(struct mm *mm)
{
	for (struct aio_ctx *c = contexts, *n; c; c = n) {
		n = c->next;
		if (c->mm == mm)
			ctx_kill(c);
	}
}

unsigned aio_capacity(const struct aio_ctx *c)
{
	return c->nr_events;
}

void aio_hold(struct aio_ctx *c)
{
	c->waiters++;
}

void aio_drop(struct aio_ctx *c)
{
	if (--c->waiters == 0 && c->dead)
		ctx_free(c);
}

long aio_reserve(struct aio_ctx *c)
{
	if (c->dead)
		return -EINVAL;
	if (c->in_use + 1 >= c->nr_events)
		return -EAGAIN;
	c->in_use++;
	return 0;
}

void aio_unreserve(struct aio_ctx *c)
{
	c->in_use--;
}

/* The event array grows as events wait to be reaped (never past the slots). */
void aio_complete(struct aio_ctx *c, const struct io_event *ev)
{
	if (c->dead)
		return;
	if (c->count == c->cap) {
		unsigned cap = MAX(c->cap * 2, 8u);
		struct io_event *n = NULL;
		/* charged to the sandbox's memory bound, as Linux's ring pages are its memory */
		if (mm_charge((uint64_t)(cap - c->cap) * sizeof(*n)) == 0 && !(n = malloc(cap * sizeof(*n))))
			mm_uncharge((uint64_t)(cap - c->cap) * sizeof(*n));
		if (!n) {
			c->in_use--;	/* the event is lost: the sandbox is out of memory */
			return;
		}
		for (unsigned i = 0; i < c->count; i++)
			n[i] = c->ev[(c->head + i) % c->cap];
		free(c->ev);
		c->ev = n;
		c->head = 0;
		c->cap = cap;
	}
	c->ev[(c->head + c->count) % c->cap] = *ev;
	c->count++;
	sentry_wake_all();
}

/* aio_read_events_ring(): up to want events to the guest; an event leaves only once copied out. */
static long take_events(struct task *t, struct aio_ctx *c, uint64_t uevents, long want)
{
	long n = 0;

	while (n < want && c->count) {
		if (copy_to_guest(t->mm, uevents + (uint64_t)n * sizeof(struct io_event), &c->ev[c->head],
				  sizeof(struct io_event)))
			return n ? n : -EFAULT;
		c->head = (c->head + 1) % c->cap;
		c->count--;
		c->in_use--;
		n++;
	}
	return n;
}

/*
 * read_events(): events are taken as they come; the call returns once it
 * has min_nr, at the deadline with what it has, at a signal with what it
 * has or EINTR, and when the context dies with what it has or EINVAL.
 */
long aio_getevents(struct task *t, struct aio_ctx *c, long min_nr, long nr, uint64_t uevents, uint64_t until)
{
	long got = 0, r = 0;

	aio_hold(c);
	for (;;) {
		if (c->dead) {
			r = got ? got : -EINVAL;
			break;
		}
		long n = take_events(t, c, uevents + (uint64_t)got * sizeof(struct io_event), nr - got);
		if (n < 0) {
			r = got ? got : n;
			break;
		}
		got += n;
		r = got;
		if (got >= min_nr || until == 1 || (until && timer_now_ns() >= until))
			break;
		if (signal_pending(t)) {
			r = got ? got : -EINTR;
			break;
		}
		sentry_timedwait(until);
	}
	aio_drop(c);
	return r;
}

/*
 * A request of the host's own AIO that completes at once (a read of 0
 * bytes from /dev/null) with host_efd as its IOCB_FLAG_RESFD: the host
 * kernel's eventfd_signal() adds the 1, saturating at ULLONG_MAX with
 * EPOLLERR as Linux does, which no write(2) can. False when the host has
 * no AIO (CONFIG_AIO off).
 */
static bool host_eventfd_signal(int host_efd)
{
	static aio_context_t host_ctx;
	static int null_fd = -1;
	struct timespec to = { 1, 0 };
	struct io_event ev;
	char dummy;

	if (!host_ctx && syscall(SYS_io_setup, 4, &host_ctx) < 0) {
		host_ctx = 0;
		return false;
	}
	if (null_fd < 0 && (null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	struct iocb cb = { .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = (uint32_t)null_fd,
			   .aio_buf = (uint64_t)(uintptr_t)&dummy, .aio_flags = IOCB_FLAG_RESFD,
			   .aio_resfd = (uint32_t)host_efd };
	struct iocb *cbs[1] = { &cb };
	if (syscall(SYS_io_submit, host_ctx, 1, cbs) != 1)
		return false;
	(void)!syscall(SYS_io_getevents, host_ctx, 1, 1, &ev, &to);	/* done already: reap it */
	return true;
}

/*
 * eventfd_signal(): add 1 to the count. Without host AIO, the host eventfd
 * is written only when a write of 1 cannot block (its count below the
 * maximum less one): past that the notification is lost rather than the
 * sentry stuck.
 */
void aio_eventfd_signal(int host_efd)
{
	struct pollfd p = { .fd = host_efd, .events = POLLOUT };
	uint64_t one = 1;

	if (host_eventfd_signal(host_efd))
		return;
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
		(void)!write(host_efd, &one, sizeof(one));
}
