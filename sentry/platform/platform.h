/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The platform vtable: how guest code is run and how the guest's address
 * space (a stub process) is changed. Modelled on gVisor's
 * Platform/AddressSpace/Context. Only files under sentry/platform/ may
 * include ptrace or seccomp headers.
 */
#ifndef PVX_PLATFORM_H
#define PVX_PLATFORM_H

#include <stdbool.h>
#include <sys/types.h>
#include "pvx/common.h"
#include "pvx/regs.h"

struct addr_space;

struct platform_ops {
	const char *name;
	/* 0 when usable on the running kernel, else -errno with a reason logged. */
	long (*probe)(void);
	/* Spawn a stub and return its empty guest address space. */
	long (*as_new)(struct addr_space **out);
	/* Kill the stub and free the address space. */
	void (*as_release)(struct addr_space *as);
	/*
	 * Run one host syscall inside the address space (mmap, munmap,
	 * mprotect, close...). Returns the raw result (-errno on failure).
	 */
	long (*as_syscall)(struct addr_space *as, long nr, const long args[6]);
	/*
	 * Make the sentry's host_fd usable by as_syscall (e.g. for a file
	 * mmap). Returns the fd number inside the address space; release it
	 * with as_put_fd.
	 */
	long (*as_get_fd)(struct addr_space *as, int host_fd);
	void (*as_put_fd)(struct addr_space *as, long as_fd);
	/*
	 * as_syscall can run read/write/pread64/pwrite64 on a sentry host fd
	 * straight into guest memory (zero-copy I/O), instead of copying
	 * through a sentry buffer.
	 */
	bool zero_copy_io;
	/* Run guest code with *regs until it traps; *regs is updated. */
	long (*run)(struct addr_space *as, struct pvx_regs *regs, struct pvx_trap *trap);
};

/* Common state every platform's address space starts with. */
struct addr_space {
	const struct platform_ops *ops;
	pid_t pid;	/* the stub process: process_vm_readv/writev target */
};

extern const struct platform_ops platform_ptrace;
extern const struct platform_ops platform_seccomp;
extern const struct platform_ops platform_vmexec;

/* Pick a platform by name ("auto" = the best one whose probe succeeds). */
const struct platform_ops *platform_select(const char *name);
/* Print every platform and whether it can run here; returns an exit status. */
int platform_list(void);

/* How many guest tasks are running (sentry/kernel.c); read without the lock. */
int sentry_live_hint(void);

/* Create the stub process image (a memfd) once; returns its fd or -errno. */
long stub_memfd(void);
/* In a forked child: exec the stub in mode (argv[1]) with fds[] as fds 3, 4, ... */
__attribute__((noreturn)) void stub_exec(int memfd, const char *mode, const int *fds, int n);

#endif
