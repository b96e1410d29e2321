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
#define PVX_TASK_SIZE_MAX 0x7ffffffff000UL	/* x86-64's TASK_SIZE_MAX (4-level paging): access_ok's bound */
#define PVX_STUB_BASE PVX_GUEST_TASK_SIZE
#define PVX_STACK_TOP 0x7fefff7fe000UL
#define PVX_STACK_SIZE (8UL << 20)	/* RLIMIT_STACK default */
#define PVX_STACK_GAP (256UL << 20)	/* between the stack's lowest page and mmap_base */
#define PVX_MMAP_BASE (PVX_STACK_TOP - PVX_STACK_SIZE - PVX_STACK_GAP)
#define PVX_ET_DYN_BASE 0x555555554000UL	/* ELF_ET_DYN_BASE: 2/3 of the 47-bit range, page aligned */
/*
 * ASLR as x86-64 Linux does it (randomize_va_space 2): the stack top moves
 * down by up to 16 GiB (stack_maxrandom_size), mmap_base and an ET_DYN
 * program by up to 2^28 pages (mmap_rnd_bits), the break by up to 1 GiB.
 */
#define PVX_STACK_RND_MAX (16UL << 30)
#define PVX_MMAP_RND_MAX (1UL << (28 + 12))
#define PVX_BRK_RND_MAX (1UL << 30)

#endif
