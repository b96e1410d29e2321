// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the seccomp stub's filters (sentry/platform/seccomp_filter.c),
 * run in a small classic-BPF interpreter: what each of the stub's syscall
 * instructions lets through, with guest-chosen registers, and the 64-bit
 * range arithmetic at its edges. Both filters are evaluated as the kernel
 * does for a stub thread: the most restrictive action wins.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "sentry/platform/seccomp.h"
#include "tap.h"

#define TOP PVX_GUEST_TASK_SIZE
#define GUEST_IP 0x401002UL
#define SITE(off) STUB_SITE_IP(off)

static struct stub_ctl ctl;

/* The subset of classic BPF that seccomp accepts (kernel/seccomp.c: seccomp_check_filter). */
static uint32_t run(const uint64_t *prog, int len, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, m[BPF_MEMWORDS] = { 0 };

	for (int pc = 0; pc < len; pc++) {
		struct sock_filter f;
		memcpy(&f, &prog[pc], sizeof(f));
		switch (f.code) {
		case BPF_LD | BPF_W | BPF_ABS: memcpy(&a, (const char *)d + f.k, 4); break;
		case BPF_LD | BPF_IMM: a = f.k; break;
		case BPF_LD | BPF_MEM: a = m[f.k]; break;
		case BPF_ST: m[f.k] = a; break;
		case BPF_MISC | BPF_TAX: x = a; break;
		case BPF_ALU | BPF_SUB | BPF_X: a -= x; break;
		case BPF_ALU | BPF_SUB | BPF_K: a -= f.k; break;
		case BPF_ALU | BPF_NEG: a = -a; break;
		case BPF_RET | BPF_K: return f.k;
		case BPF_JMP | BPF_JEQ | BPF_K: pc += a == f.k ? f.jt : f.jf; break;
		case BPF_JMP | BPF_JGE | BPF_K: pc += a >= f.k ? f.jt : f.jf; break;
		case BPF_JMP | BPF_JSET | BPF_K: pc += (a & f.k) ? f.jt : f.jf; break;
		case BPF_JMP | BPF_JEQ | BPF_X: pc += a == x ? f.jt : f.jf; break;
		case BPF_JMP | BPF_JGT | BPF_X: pc += a > x ? f.jt : f.jf; break;
		case BPF_JMP | BPF_JGE | BPF_X: pc += a >= x ? f.jt : f.jf; break;
		default: return 0xdead;	/* an instruction this interpreter (and the test) does not know */
		}
	}
	return 0xdead;	/* fell off the end: the kernel refuses such a program */
}

/* The action for a stub thread (both filters), or for K (only the stub's filter). */
static uint32_t action(bool k, uint64_t ip, long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		       uint64_t a4, uint64_t a5)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = AUDIT_ARCH_X86_64, .instruction_pointer = ip,
				  .args = { a0, a1, a2, a3, a4, a5 } };
	uint32_t c = run(ctl.c_filter, ctl.c_prog.len, &d);
	if (k)
		return c;
	uint32_t g = run(ctl.g_filter, ctl.g_prog.len, &d);
	/* seccomp_run_filters(): the lowest action value (as signed) wins */
	return (int32_t)(g & SECCOMP_RET_ACTION_FULL) < (int32_t)(c & SECCOMP_RET_ACTION_FULL) ? g : c;
}

#define T(...) action(false, __VA_ARGS__)
#define K(...) action(true, __VA_ARGS__)
#define GEN SITE(STUB_OFF_SITE_GENERIC)
#define ALLOW SECCOMP_RET_ALLOW
#define KILL SECCOMP_RET_KILL_PROCESS
#define TRAP SECCOMP_RET_TRAP
#define FIX (MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED)

int main(void)
{
	ok(seccomp_fill_ctl(&ctl) == 0, "filters built, sites found in the stub image");
	ok(ctl.c_prog.filter == STUB_CTL_ADDR + offsetof(struct stub_ctl, c_filter) && ctl.c_prog.len > 0 &&
	   ctl.g_prog.len > 0 && ctl.k_set == 1UL << (STUB_SIG_CTL - 1), "control page filled");

	/* Guest code: every syscall traps to the sentry; odd entries kill. */
	ok(T(GUEST_IP, SYS_getpid, 0, 0, 0, 0, 0, 0) == TRAP, "guest getpid traps");
	ok(T(GUEST_IP, SYS_clone, STUB_THREAD_CLONE_FLAGS, 0, 0, 0, 0, 0) == TRAP, "guest clone traps");
	ok(T(GUEST_IP, SYS_mmap, TOP, 4096, 7, FIX, -1, 0) == TRAP, "guest mmap anywhere traps (the sentry checks)");
	ok(T(STUB_TEXT_ADDR + 2, SYS_mmap, TOP + 0x8000, 4096, 7, FIX, -1, 0) == TRAP,
	   "the ptrace gadget is no site: traps");
	ok(T(STUB_TEXT_ADDR + 0x1000, SYS_mmap, TOP + 0x8000, 4096, 7, FIX, -1, 0) == TRAP,
	   "a page past the text (the old window): traps");
	ok(T(GUEST_IP, 0x40000000 | SYS_getpid, 0, 0, 0, 0, 0, 0) == TRAP, "x32 traps (the sentry answers ENOSYS)");
	ok(T(STUB_SITE_IP(STUB_OFF_SITE_GENERIC), 0x40000000 | SYS_mmap, 0, 0, 0, 0, 0, 0) == TRAP, "x32 at a stub site traps, never runs");
	ok(T(GUEST_IP, -1, 0, 0, 0, 0, 0, 0) == TRAP, "syscall(-1) traps (ENOSYS)");
	struct seccomp_data i386 = { .nr = 20, .arch = AUDIT_ARCH_I386, .instruction_pointer = GUEST_IP };
	ok(run(ctl.c_filter, ctl.c_prog.len, &i386) == KILL, "int $0x80 kills");

	/* The generic site: mm calls only inside the guest's range. */
	ok(T(GEN, SYS_mmap, TOP - 4096, 4096, 7, FIX, -1, 0) == ALLOW, "mmap of the last guest page");
	ok(T(GEN, SYS_mmap, TOP - 4096, 4097, 7, FIX, -1, 0) == KILL, "mmap one byte into the stub");
	ok(T(GEN, SYS_mmap, TOP - 4096, 8192, 7, FIX, -1, 0) == KILL, "mmap one page into the stub");
	ok(T(GEN, SYS_mmap, TOP, 4096, 7, FIX, -1, 0) == KILL, "mmap at the stub's base");
	ok(T(GEN, SYS_mmap, STUB_TEXT_ADDR + 0x7000, 4096, 7, FIX, -1, 0) == KILL, "mmap in the old window");
	ok(T(GEN, SYS_mmap, STUB_SHARED_ADDR, 4096, 3, FIX, -1, 0) == KILL, "mmap over the shared regions");
	ok(T(GEN, SYS_mmap, 0x10000, TOP - 0x10000, 3, FIX, -1, 0) == ALLOW, "mmap of the whole guest range");
	ok(T(GEN, SYS_mmap, 0x10000, TOP - 0x10000 + 1, 3, FIX, -1, 0) == KILL, "... and a byte more");
	ok(T(GEN, SYS_mmap, 0x7fef00001000UL, TOP - 0x7fef00001000UL, 3, FIX, -1, 0) == ALLOW,
	   "borrow across the halves: up to the top");
	ok(T(GEN, SYS_mmap, 0x7fef00001000UL, TOP - 0x7fef00001000UL + 1, 3, FIX, -1, 0) == KILL,
	   "borrow across the halves: a byte past");
	ok(T(GEN, SYS_mmap, 0x7fef00000000UL, TOP - 0x7fef00000000UL, 3, FIX, -1, 0) == ALLOW,
	   "no borrow (low half 0): up to the top");
	ok(T(GEN, SYS_mmap, 0x7fef00000000UL, TOP - 0x7fef00000000UL + 4096, 3, FIX, -1, 0) == KILL,
	   "no borrow (low half 0): a page past");
	ok(T(GEN, SYS_mmap, 0x100000000UL, 4096, 3, FIX, -1, 0) == ALLOW, "a low half of 0, a small length");
	ok(T(GEN, SYS_mmap, 0x1000, 1UL << 63, 3, FIX, -1, 0) == KILL, "a huge length");
	ok(T(GEN, SYS_mmap, ~0UL - 4095, 8192, 3, FIX, -1, 0) == KILL, "an address that wraps");
	ok(T(GEN, SYS_mmap, 0x10000, 4096, 3, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == KILL,
	   "mmap without MAP_FIXED (the kernel would pick, maybe above the guest)");
	ok(T(GEN, SYS_munmap, STUB_CTL_ADDR, 4096, 0, 0, 0, 0) == KILL, "munmap of the control page");
	ok(T(GEN, SYS_munmap, 0x10000, 4096, 0, 0, 0, 0) == ALLOW, "munmap of guest memory");
	ok(T(GEN, SYS_mprotect, STUB_TEXT_ADDR, 4096, 7, 0, 0, 0) == KILL, "mprotect of the stub's text");
	ok(T(GEN, SYS_mprotect, 0x10000, 4096, 7, 0, 0, 0) == ALLOW, "mprotect rwx of guest memory");
	ok(T(GEN, SYS_madvise, 0x10000, 4096, MADV_DONTNEED, 0, 0, 0) == ALLOW, "madvise DONTNEED");
	ok(T(GEN, SYS_madvise, 0x10000, 4096, 100 /* MADV_HWPOISON */, 0, 0, 0) == KILL, "madvise HWPOISON");
	ok(T(GEN, SYS_madvise, TOP - 4096, 8192, MADV_DONTNEED, 0, 0, 0) == KILL, "madvise into the stub");
	ok(T(GEN, SYS_madvise, 0x10000, 4096, MADV_WIPEONFORK, 0, 0, 0) == ALLOW, "madvise WIPEONFORK (the guest's fork)");
	ok(T(GEN, SYS_madvise, STUB_SHARED_ADDR, 4096, MADV_DOFORK, 0, 0, 0) == KILL,
	   "no DOFORK of the stub's regions (a forked stub would share them)");
	ok(T(GEN, SYS_mincore, 0x10000, 4096, TOP + 0x100000, 0, 0, 0) == KILL, "mincore's vector in the stub");
	ok(T(GEN, SYS_mremap, 0x10000, 4096, 8192, 0, 0, 0) == ALLOW, "mremap grows in place");
	ok(T(GEN, SYS_mremap, TOP - 4096, 4096, 8192, 0, 0, 0) == KILL, "mremap grows into the stub");
	ok(T(GEN, SYS_mremap, 0x10000, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, 0x20000, 0) == ALLOW,
	   "mremap moves inside the guest");
	ok(T(GEN, SYS_mremap, 0x10000, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, STUB_SHARED_ADDR, 0) == KILL,
	   "mremap moves onto the regions");
	ok(T(GEN, SYS_mremap, STUB_TEXT_ADDR, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, 0x20000, 0) == KILL,
	   "mremap moves the stub's text out");
	ok(T(GEN, SYS_mremap, 0x10000, 4096, 8192, MREMAP_MAYMOVE, 0, 0) == KILL, "mremap lets the kernel pick");

	/* The generic site: the rest of what the stub's C code needs, and nothing else. */
	ok(T(GEN, SYS_futex, 0x10000, FUTEX_WAIT, 0, 0, 0, 0) == ALLOW, "futex wait");
	ok(T(GEN, SYS_futex, 0x10000, FUTEX_CMP_REQUEUE, 0, 0, 0, 0) == KILL, "futex requeue");
	ok(T(GEN, SYS_recvmsg, STUB_FD_SOCK, 0x10000, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0) == ALLOW,
	   "non-blocking recvmsg on the socket");
	ok(T(GEN, SYS_recvmsg, STUB_FD_SOCK, 0x10000, MSG_CMSG_CLOEXEC, 0, 0, 0) == KILL, "blocking recvmsg");
	ok(T(GEN, SYS_close, STUB_FD_SOCK, 0, 0, 0, 0, 0) == KILL, "close of the socket");
	ok(T(GEN, SYS_close, 0, 0, 0, 0, 0, 0) == ALLOW, "close of a received fd");
	ok(T(GEN, SYS_clone, STUB_THREAD_CLONE_FLAGS, 0, 0, 0, 0, 0) == KILL, "clone at the generic site");
	ok(T(GEN, SYS_clone3, 0x10000, 88, 0, 0, 0, 0) == KILL, "clone3");
	ok(T(GEN, SYS_write, 1, 0x10000, 1, 0, 0, 0) == KILL, "write at the generic site");
	ok(T(GEN, SYS_getpid, 0, 0, 0, 0, 0, 0) == KILL, "getpid at the generic site");
	ok(T(GEN, SYS_exit, 0, 0, 0, 0, 0, 0) == ALLOW && T(GEN, SYS_exit_group, 0, 0, 0, 0, 0, 0) == ALLOW,
	   "exit and exit_group");

	/* The restorer, and K's sites: K may, no other thread. */
	ok(T(SITE(STUB_OFF_SITE_SIGRETURN), SYS_rt_sigreturn, 0, 0, 0, 0, 0, 0) == ALLOW, "rt_sigreturn");
	ok(T(SITE(STUB_OFF_SITE_SIGRETURN), SYS_mmap, 0x10000, 4096, 3, FIX, -1, 0) == KILL,
	   "anything else at the restorer");
	uint64_t kset = STUB_CTL_ADDR + STUB_CTL_OFF_KSET, gprog = STUB_CTL_ADDR + STUB_CTL_OFF_GPROG;
	ok(K(SITE(STUB_OFF_SITE_WAIT), SYS_rt_sigtimedwait, kset, 0, 0, 8, 0, 0) == ALLOW, "K waits");
	ok(T(SITE(STUB_OFF_SITE_WAIT), SYS_rt_sigtimedwait, kset, 0, 0, 8, 0, 0) == KILL, "no other thread does");
	ok(K(SITE(STUB_OFF_SITE_WAIT), SYS_rt_sigtimedwait, 0x10000, 0, 0, 8, 0, 0) == KILL, "K waits on its set only");
	ok(K(SITE(STUB_OFF_SITE_CLONE), SYS_clone, STUB_THREAD_CLONE_FLAGS, 0, 0, 0, 0, 0) == ALLOW, "K clones");
	ok(T(SITE(STUB_OFF_SITE_CLONE), SYS_clone, STUB_THREAD_CLONE_FLAGS, 0, 0, 0, 0, 0) == KILL,
	   "no other thread does");
	ok(K(SITE(STUB_OFF_SITE_CLONE), SYS_clone, STUB_THREAD_CLONE_FLAGS | 0x300000, 0, 0x10000, 0x10000, 0, 0) ==
	   KILL, "K clones a stub thread only");
	ok(K(SITE(STUB_OFF_SITE_CLONE), SYS_clone, 0x11 /* SIGCHLD: a process */, 0, 0, 0, 0, 0) == KILL,
	   "K makes no process");
	ok(K(SITE(STUB_OFF_SITE_REPORT), SYS_write, STUB_FD_SOCK, STUB_CTL_ADDR, 1, 0, 0, 0) == ALLOW, "K reports");
	ok(T(SITE(STUB_OFF_SITE_REPORT), SYS_write, STUB_FD_SOCK, STUB_CTL_ADDR, 1, 0, 0, 0) == KILL,
	   "no other thread does");
	ok(K(SITE(STUB_OFF_SITE_REPORT), SYS_write, 1, STUB_CTL_ADDR, 1, 0, 0, 0) == KILL, "K writes to its socket only");
	ok(K(SITE(STUB_OFF_SITE_SECCOMP), SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, gprog, 0, 0, 0) == ALLOW,
	   "a new thread installs its filter");
	ok(T(SITE(STUB_OFF_SITE_SECCOMP), SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, gprog, 0, 0, 0) == KILL,
	   "... once");
	ok(K(SITE(STUB_OFF_SITE_SECCOMP), SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, gprog, 0,
	     0, 0) == KILL, "no filter flags (TSYNC would reach K)");
	ok(K(SITE(STUB_OFF_SITE_SECCOMP), SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, 0x10000, 0, 0, 0) == KILL,
	   "no filter of the guest's");

	/* The fork of the whole stub, and the forked K's setup (stub_fork_child): K's only. */
	const uint64_t FK = SITE(STUB_OFF_SITE_FORK), KS = SITE(STUB_OFF_SITE_KSC);
	ok(K(FK, SYS_clone, STUB_FORK_CLONE_FLAGS, 0, 0, 0, 0, 0) == ALLOW, "K forks the stub");
	ok(T(FK, SYS_clone, STUB_FORK_CLONE_FLAGS, 0, 0, 0, 0, 0) == KILL, "no other thread does");
	ok(K(FK, SYS_clone, STUB_THREAD_CLONE_FLAGS, 0, 0, 0, 0, 0) == KILL, "the fork site makes no thread");
	ok(K(FK, SYS_clone, STUB_FORK_CLONE_FLAGS | 0x100 /* CLONE_VM */, 0, 0, 0, 0, 0) == KILL, "nor shares the mm");
	ok(K(FK, SYS_clone, STUB_FORK_CLONE_FLAGS, 0x10000, 0, 0, 0, 0) == KILL, "nor takes a stack");
	ok(K(KS, SYS_recvmsg, STUB_FD_KSOCK, 0x10000, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0) == ALLOW,
	   "the forked K takes its fds");
	ok(T(KS, SYS_recvmsg, STUB_FD_KSOCK, 0x10000, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0) == KILL,
	   "no guest thread takes them");
	ok(T(GEN, SYS_recvmsg, STUB_FD_KSOCK, 0x10000, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0) == KILL,
	   "nor at the generic site");
	ok(K(KS, SYS_recvmsg, STUB_FD_SOCK, 0x10000, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0) == KILL, "K's socket only");
	ok(K(KS, SYS_recvmsg, STUB_FD_KSOCK, 0x10000, MSG_CMSG_CLOEXEC, 0, 0, 0) == KILL, "without blocking");
	ok(K(KS, SYS_mmap, STUB_SHARED_ADDR, STUB_SHARED_TOTAL, 3, MAP_SHARED | MAP_FIXED, 7, 0) == ALLOW,
	   "it maps its regions");
	ok(K(KS, SYS_mmap, STUB_CTL_ADDR, STUB_CTL_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, 8, 0) == ALLOW,
	   "and its control page");
	ok(K(KS, SYS_mmap, STUB_CTL_ADDR, STUB_CTL_SIZE, 3, MAP_SHARED | MAP_FIXED, 8, 0) == KILL,
	   "read-only");
	ok(K(KS, SYS_mmap, STUB_TEXT_ADDR, 4096, 3, MAP_SHARED | MAP_FIXED, 8, 0) == KILL, "nothing else");
	ok(K(KS, SYS_mmap, 0x10000, STUB_SHARED_TOTAL, 3, MAP_SHARED | MAP_FIXED, 8, 0) == KILL, "nowhere else");
	ok(K(KS, SYS_madvise, STUB_CTL_ADDR, 4096, MADV_DONTFORK, 0, 0, 0) == ALLOW, "DONTFORK");
	ok(K(KS, SYS_madvise, STUB_CTL_ADDR, 4096, MADV_DONTNEED, 0, 0, 0) == KILL, "no other advice");
	ok(K(KS, SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0) == ALLOW, "its death signal");
	ok(K(KS, SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0, 0) == KILL, "no other prctl");
	ok(K(KS, SYS_dup3, 9, STUB_FD_SOCK, 0, 0, 0, 0) == ALLOW, "its sockets onto 3 and 6");
	ok(K(KS, SYS_close_range, 7, ~0U, 0, 0, 0, 0) == ALLOW, "the rest closed");
	ok(T(KS, SYS_dup3, 9, STUB_FD_SOCK, 0, 0, 0, 0) == KILL, "a guest thread at that site dies");
	ok(K(KS, SYS_getppid, 0, 0, 0, 0, 0, 0) == KILL, "K asks nothing else there");
	ok(K(KS, SYS_execve, 0, 0, 0, 0, 0, 0) == KILL, "nothing else at that site");
	return tap_done();
}
