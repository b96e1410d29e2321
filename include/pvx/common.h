/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small shared helpers: cleanup attributes, errno conventions, page math.
 *
 * Conventions (see DESIGN.md "Errors"): internal functions return -errno as a
 * long; errno is only read right after a host call; the guest sees -errno.
 */
#ifndef PVX_COMMON_H
#define PVX_COMMON_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define __must_check __attribute__((warn_unused_result))
#define __unused __attribute__((unused))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#undef PAGE_SIZE
#undef PAGE_MASK
#define PAGE_SIZE 4096UL
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define PAGE_ALIGN_UP(x) (((x) + PAGE_SIZE - 1) & PAGE_MASK)
#define PAGE_ALIGN_DOWN(x) ((x) & PAGE_MASK)

/* Guest tasks at most (the pid space; the platforms size their stub slots by it). */
#define PVX_MAX_TASKS 1024

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* -errno of the last host call, never 0 (a failed call with errno 0 is EIO). */
static inline long neg_errno(void)
{
	return errno ? -(long)errno : -EIO;
}

static inline void cleanup_free_fn(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_close_fn(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define cleanup_free __attribute__((cleanup(cleanup_free_fn)))
#define cleanup_close __attribute__((cleanup(cleanup_close_fn)))

/* Hand ownership out of a cleanup_* variable. */
#define steal_ptr(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define steal_fd(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

#endif
