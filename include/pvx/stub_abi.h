/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sentry knows about the stub's image: where it is linked and where
 * its entry points are. Shared by stub/ and sentry/; stub/stub.lds places
 * .text.gadget first so the offsets below hold (checked at start-up by
 * platform code reading the bytes back).
 */
#ifndef PVX_STUB_ABI_H
#define PVX_STUB_ABI_H

#include "pvx/mm.h"

/* "syscall; int3": run one syscall, then stop the tracer-visible way. */
#define STUB_SYSCALL_GADGET (PVX_STUB_BASE + 0x1000UL)
#define STUB_SYSCALL_GADGET_BYTES "\x0f\x05\xcc"

/* Exit codes of the stub when it cannot do its job (distinct per step). */
enum stub_exit {
	STUB_EXIT_NOT_TRACED = 100,	/* run directly instead of by pvx */
};

#endif
