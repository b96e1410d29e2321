/* SPDX-License-Identifier: GPL-2.0 */
/* Where things are in a guest address space: plain numbers for every layer and the stub. */
#ifndef PVX_GUEST_LAYOUT_H
#define PVX_GUEST_LAYOUT_H

/*
 * Guest layout. The stub lives at PVX_STUB_BASE and above (see stub/stub.lds);
 * the guest owns [PVX_GUEST_MIN, PVX_GUEST_TASK_SIZE).
 */
#define PVX_GUEST_MIN 0x10000UL		/* vm.mmap_min_addr */
#define PVX_GUEST_TASK_SIZE 0x7ff000000000UL
#define PVX_STUB_BASE PVX_GUEST_TASK_SIZE
#define PVX_STACK_TOP 0x7fefff7fe000UL
#define PVX_STACK_SIZE (8UL << 20)	/* RLIMIT_STACK default */
#define PVX_MMAP_BASE (PVX_STACK_TOP - PVX_STACK_SIZE - (256UL << 20))
#define PVX_ET_DYN_BASE 0x555555554000UL	/* where static-pie images load */

#endif
