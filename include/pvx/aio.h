/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Linux AIO contexts (sentry/kernel/aio.c): io_setup's context, the events
 * of requests that completed and io_getevents' wait for them. Requests are
 * done when submitted (syscalls/sys_aio.c), as Linux's buffered AIO does
 * them, so a context holds completed events only. All under the sentry lock.
 */
#ifndef PVX_AIO_H
#define PVX_AIO_H

#include <linux/aio_abi.h>
#include "pvx/task.h"

/* fs.aio-max-nr, Linux's default: io_setup's nr_events summed over every context stays below it. */
#define PVX_AIO_MAX_NR 65536

struct aio_ctx;

/*
 * io_setup(2) for t's address space: a context of nr_events, its ring a
 * read-only mapping whose address is the aio_context_t (*id).
 */
long aio_setup(struct task *t, unsigned nr_events, uint64_t *id) __must_check;
/* io_destroy(2): EINVAL for no context of t's address space with that id. */
long aio_destroy(struct task *t, uint64_t id) __must_check;
/* The context id names in t's address space, or NULL (lookup_ioctx). */
struct aio_ctx *aio_lookup(struct task *t, uint64_t id);
/* Keep c while the sentry lock may be dropped (a request's I/O): io_destroy frees it only after aio_drop. */
void aio_hold(struct aio_ctx *c);
void aio_drop(struct aio_ctx *c);
/* The requests the context takes at once (io_submit's nr is cut to it). */
unsigned aio_capacity(const struct aio_ctx *c);
/* Reserve a slot for one request (aio_get_req): -EAGAIN when every slot is taken, -EINVAL once destroyed. */
long aio_reserve(struct aio_ctx *c) __must_check;
/* Give back a slot aio_reserve took for a request that failed before it was issued. */
void aio_unreserve(struct aio_ctx *c);
/* A reserved request is done: its event is queued and waiters woken (dropped if the context died). */
void aio_complete(struct aio_ctx *c, const struct io_event *ev);
/*
 * io_getevents(2) after the ctx lookup: between min_nr and nr events to
 * guest address uevents, waiting until CLOCK_MONOTONIC ns until (0: no
 * limit; 1: do not wait) with the sentry lock dropped. -EINTR for a
 * signal before any event, -EINVAL when the context is destroyed meanwhile.
 */
long aio_getevents(struct task *t, struct aio_ctx *c, long min_nr, long nr, uint64_t uevents, uint64_t until)
	__must_check;
/* IOCB_FLAG_RESFD's notification: eventfd_signal() on the host eventfd host_efd (saturating, never blocking). */
void aio_eventfd_signal(int host_efd);
/* fs.aio-nr: the nr_events of the contexts that exist, summed. */
unsigned long aio_nr(void);
/* An address space goes (exec, exit): its contexts with it (exit_aio). */
void aio_mm_gone(struct mm *mm);

#endif
