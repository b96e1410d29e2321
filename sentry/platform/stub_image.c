// SPDX-License-Identifier: GPL-2.0
/*
 * The stub program is linked into pvx (stub_blob.S) and exec'd from a sealed
 * memfd, so pvx needs no install path to find it and the guest cannot swap it.
 * Also here: how every platform starts a stub (stub_start), and the list of
 * live stubs that pvx kills and reaps when it is told to terminate.
 */
#include <elf.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pvx/common.h"
#include "pvx/guest_layout.h"
#include "pvx/hostcred.h"
#include "pvx/log.h"
#include "pvx/sigframe.h"
#include "platform.h"

extern const char pvx_stub_blob[], pvx_stub_blob_end[];

static bool nodump;	/* stubs make themselves undumpable (stub_memfd decides) */
static pid_t sentry;	/* the process that forks the stubs */

/*
 * PR_SET_DUMPABLE 0 keeps any core of guest memory from being written, but
 * it also keeps whoever lacks CAP_SYS_PTRACE from process_vm_readv(2) and
 * /proc/PID/{mem,syscall} on the stub, which the sentry needs. So only a
 * sentry with that capability asks for it; RLIMIT_CORE 0 holds for all.
 */
static bool may_nodump(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[CAP_TO_INDEX(CAP_SYS_PTRACE)].effective & CAP_TO_MASK(CAP_SYS_PTRACE);
}

long stub_memfd(void)
{
	static int fd = -1;
	size_t len = (size_t)(pvx_stub_blob_end - pvx_stub_blob);
	size_t off = 0;

	if (fd >= 0)
		return fd;
	sentry = getpid();
	nodump = may_nodump();
	int mfd = memfd_create("pvx-stub", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return neg_errno();
	while (off < len) {
		ssize_t n = write(mfd, pvx_stub_blob + off, len - off);
		if (n <= 0) {
			long err = n < 0 ? neg_errno() : -EIO;
			close(mfd);
			return err;
		}
		off += (size_t)n;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		pr_debug("cannot seal the stub memfd: %m");
	fd = mfd;
	return fd;
}

bool stub_nodump(void)
{
	return nodump;
}

/* The bytes of the stub image at stub address addr (its PT_LOAD segments). */
long stub_image_peek(uint64_t addr, void *buf, size_t n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)pvx_stub_blob;
	size_t len = (size_t)(pvx_stub_blob_end - pvx_stub_blob);

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phoff > len ||
	    eh->e_phnum > (len - eh->e_phoff) / sizeof(Elf64_Phdr))
		return -ENOEXEC;
	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, pvx_stub_blob + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr - ph.p_vaddr > ph.p_filesz ||
		    n > ph.p_filesz - (addr - ph.p_vaddr) || ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
			continue;
		memcpy(buf, pvx_stub_blob + ph.p_offset + (addr - ph.p_vaddr), n);
		return 0;
	}
	return -EFAULT;
}

/*
 * In the child of stub_start: become the stub. It dies with the sentry
 * thread that made it, never dumps core, gets a fixed layout (its own stack
 * and vdso stay above the guest range), and keeps no fd but fds[0..n) moved
 * to 3, 4, ... This child shares our memory until its execve (a vfork): it
 * writes nothing but its own stack and errno (the parent's, which
 * stub_start restores), and takes no lock.
 */
static __attribute__((noreturn)) void stub_exec(int memfd, const char *mode, const int *fds, int n)
{
	char *const argv[] = { "pvx-stub", (char *)mode, nodump ? "nodump" : NULL, NULL };
	static char *const envp[] = { NULL };
	const struct rlimit nocore = { 0, 0 };
	int moved[8], m;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != sentry_pid())
		_exit(126);	/* the sentry thread is already gone: no death signal would come */
	if (setrlimit(RLIMIT_CORE, &nocore) < 0)
		_exit(126);
	personality(ADDR_NO_RANDOMIZE);
	/* Out of the way of the target numbers first, then into place. */
	m = fcntl(memfd, F_DUPFD_CLOEXEC, 16);
	for (int i = 0; i < n && i < 8; i++)
		moved[i] = fcntl(fds[i], F_DUPFD, 16);
	for (int i = 0; i < n && i < 8; i++)
		if (moved[i] < 0 || dup2(moved[i], 3 + i) < 0)
			_exit(126);
	if (m < 0)
		_exit(126);
	syscall(SYS_close_range, 0, 2, 0);
	syscall(SYS_close_range, 3 + n, m - 1, 0);
	syscall(SYS_close_range, m + 1, ~0U, 0);
	syscall(SYS_execveat, m, "", argv, envp, AT_EMPTY_PATH);
	_exit(127);
}

struct spawn {
	int memfd, n;
	const char *mode;
	const int *fds;
	bool traceme;
	const uint64_t *mask;	/* the parent's signal mask, for the stub */
};

static int spawn_child(void *arg)
{
	const struct spawn *sp = arg;

	/*
	 * Every signal is blocked here. A handler of ours run in this child
	 * would run on the sentry's memory: every caught signal goes back to
	 * SIG_DFL (this child's dispositions are its own copy) before the
	 * parent's mask is back. execve would reset them anyway.
	 */
	for (int sig = 1; sig <= 64; sig++) {
		struct k_sigaction ka;
		if (sig == SIGKILL || sig == SIGSTOP ||
		    syscall(SYS_rt_sigaction, sig, NULL, &ka, sizeof(ka.mask)) < 0 ||
		    ka.handler == (void *)SIG_DFL || ka.handler == (void *)SIG_IGN)
			continue;
		ka = (struct k_sigaction){ .handler = (void *)SIG_DFL };
		syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask));
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, sp->mask, NULL, sizeof(*sp->mask));
	hostcred_spawn_child();
	if (sp->traceme && syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0) < 0)
		_exit(126);
	stub_exec(sp->memfd, sp->mode, sp->fds, sp->n);
}

/*
 * A stub is a vfork of the calling thread (clone CLONE_VM|CLONE_VFORK on a
 * stack of our frame), not a fork: a fork copied the page tables of the
 * whole sentry and left every page of it copy-on-write, to be faulted back
 * on its next write, all for a child that execs at once. `pvx run
 * busybox true` on one CPU of the 2-vCPU VM of 2026-12-07 (perf stat, 30
 * runs): seccomp 9.3 -> 7.7 ms, ptrace 8.6 -> 7.1 ms; 261 -> 196 page
 * faults. The parent's signals are blocked from the clone until the child
 * has exec'd or died; the child's own copy of them is put back first.
 */
pid_t stub_start(int memfd, const char *mode, const int *fds, int n, bool traceme)
{
	uint64_t all = ~0ULL, old;
	char stack[16384] __attribute__((aligned(64)));
	struct spawn sp = { memfd, n, mode, fds, traceme, &old };
	int saved = errno, err = 0;

	if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all)) < 0)
		return neg_errno();
	pid_t pid = clone(spawn_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &sp);
	if (pid < 0)
		err = errno;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	errno = saved;
	return pid < 0 ? -err : pid;
}

/*
 * The live stubs, for terminate_stubs(): a slot per stub, claimed and
 * released with atomic exchanges, so a signal handler can read it. Whoever
 * takes a pid out of the list (stub_unregister, terminate_stubs) is the one
 * to kill and reap it: a pid is never signalled after it was reaped.
 */
#define STUB_SLOTS (2 * PVX_MAX_TASKS)
static pid_t stub_slots[STUB_SLOTS];

pid_t sentry_pid(void)
{
	return sentry ? sentry : getpid();
}

void stub_register(pid_t pid)
{
	for (int i = 0; i < STUB_SLOTS; i++) {
		pid_t free_slot = 0;
		if (__atomic_compare_exchange_n(&stub_slots[i], &free_slot, pid, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return;
	}
	pr_warn("too many stubs to track: stub %d will not be reaped on SIGTERM", pid);
}

bool stub_unregister(pid_t pid)
{
	for (int i = 0; i < STUB_SLOTS; i++) {
		pid_t p = pid;
		if (__atomic_compare_exchange_n(&stub_slots[i], &p, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return true;
	}
	return false;
}

uint64_t stub_cpu_ns(pid_t pid)
{
	struct timespec ts;

	/* MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED): the stub's live and exited threads */
	if (pid <= 0 || clock_gettime((clockid_t)((~(unsigned)pid << 3) | 2), &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t stubs_cpu_ns(void)
{
	struct rusage ru;
	uint64_t ns = 0;

	for (int i = 0; i < STUB_SLOTS; i++)
		ns += stub_cpu_ns(__atomic_load_n(&stub_slots[i], __ATOMIC_RELAXED));
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)	/* the reaped ones: the sentry has no other children */
		ns += ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ULL +
		      ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
	return ns;
}

bool stub_reap(pid_t pid, int wflags, struct rusage *ru)
{
	for (;;) {
		pid_t r = wait4(pid, NULL, wflags, ru);
		if (r == pid)
			return ru != NULL;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

/*
 * pvx is told to terminate: SIGKILL every stub and reap it (and any stub
 * thread a tracer would have reaped), for at most ms milliseconds.
 * Async-signal-safe. Stubs forked meanwhile die with pvx (PDEATHSIG).
 */
void terminate_stubs(int ms)
{
	for (int i = 0; i < STUB_SLOTS; i++) {
		pid_t p = __atomic_exchange_n(&stub_slots[i], 0, __ATOMIC_SEQ_CST);
		if (p > 0)
			kill(p, SIGKILL);
	}
	for (int waited = 0; waited < ms;) {
		pid_t r = waitpid(-1, NULL, WNOHANG | __WALL);
		if (r < 0 && errno != EINTR)
			return;	/* ECHILD: all reaped */
		if (r == 0) {
			struct timespec ts = { 0, 5000000 };
			nanosleep(&ts, NULL);
			waited += 5;
		}
	}
}

uint64_t stub_vdso(pid_t pid)
{
	uint64_t v[2 * 64] = { 0 }, vdso = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	int fd = open_privileged(path, O_RDONLY | O_CLOEXEC);	/* 0400 root: not nobody's */
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, v, sizeof(v) - 2 * sizeof(*v));
	close(fd);
	for (ssize_t i = 0; n > 0 && i + 1 < n / (ssize_t)sizeof(*v) && v[i] != AT_NULL; i += 2)
		if (v[i] == AT_SYSINFO_EHDR)
			vdso = v[i + 1];
	return vdso >= PVX_STUB_BASE && vdso < (1UL << 47) && !(vdso & (PAGE_SIZE - 1)) ? vdso : 0;
}

long stub_vdso_span(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	char path[64], line[256];

	*lo = UINT64_MAX;
	*hi = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	int fd = open_privileged(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 &&
		    (strstr(line, " [vdso]") || strstr(line, " [vvar]") || strstr(line, " [vvar_vclock]"))) {
			*lo = MIN(*lo, (uint64_t)s);
			*hi = MAX(*hi, (uint64_t)e);
		}
	}
	fclose(f);
	return *hi > *lo && *lo >= PVX_STUB_BASE ? 0 : -ENOENT;
}
