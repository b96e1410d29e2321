/* sec_stub_sigblock: a hostile guest whose thread blocks every host signal of its stub thread (issue 11,
 * finding 5): it runs the stub's signal restorer, rt_sigreturn(2), on a frame of its own whose signal mask
 * is all ones, then spins without ever making a syscall. pvx can no longer interrupt that thread with a
 * signal; the sandbox must end anyway. (No stub code in reach, as on vmexec: the same through the guest's
 * own rt_sigreturn, which the sentry emulates.)
 * usage: sec_stub_sigblock exit|signal|wait
 *   exit:   the main thread then calls exit_group(4)            (exit status 4)
 *   signal: the main thread then kills itself with SIGTERM      (killed by SIGTERM, 143)
 *   wait:   the main thread prints "ready" and sleeps 60 s (for SIGTERM/SIGKILL sent to pvx) */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "guest.h"
#include "stubgadget.h"
#include "../../include/pvx/sigframe.h"

static uintptr_t restorer;

/* Where the stub's restorer cannot be found (vmexec unmaps the stub): the guest's own rt_sigreturn. */
__asm__(".text\n"
	"own_restorer:\n"
	"	syscall\n"
	"	hlt\n");
extern char own_restorer[];
static volatile unsigned long spins;
static unsigned long spin_stack[4096] __attribute__((aligned(16)));

static void __attribute__((noreturn, used)) spin(void)
{
	for (;;)
		spins++;
}

static void *blocker(void *arg)
{
	static struct {
		uint64_t pretcode;
		struct k_ucontext uc;
		struct k_siginfo info;
	} f __attribute__((aligned(64)));
	uint16_t cs, ss;

	(void)arg;
	__asm__ volatile("mov %%cs, %0\n\tmov %%ss, %1" : "=r"(cs), "=r"(ss));
	memset(&f, 0, sizeof(f));
	f.uc.mc.rip = (uint64_t)(uintptr_t)spin;
	f.uc.mc.rsp = (uint64_t)(uintptr_t)&spin_stack[4096 - 2];
	f.uc.mc.eflags = 0x202;
	f.uc.mc.cs = cs;
	f.uc.mc.ss = ss;
	f.uc.sigmask = ~0UL;	/* every host signal blocked in this stub thread */
	/* rt_sigreturn takes its frame at rsp - 8: the restorer runs after the handler's ret popped pretcode */
	__asm__ volatile("mov %0, %%rsp\n\t"
			 "mov $15, %%eax\n\t"
			 "jmp *%1"
			 :
			 : "r"(&f.uc), "r"(restorer)
			 : "memory");
	__builtin_unreachable();
}

int main(int argc, char **argv)
{
	struct stub_gadgets g;
	pthread_t t;

	if (argc < 2)
		return 2;
	probe_init();
	find_gadgets(&g);
	restorer = g.sigreturn ? g.sigreturn : (uintptr_t)own_restorer;
	pthread_create(&t, NULL, blocker, NULL);
	/* until the blocker spins, 10 s at most: a fixed 300 ms could end before a slow machine (QEMU's
	 * software CPU, vmexec in CI) had the new thread through its sigreturn */
	struct timespec ts = { 0, 10000000 };
	for (int i = 0; i < 1000 && !spins; i++)
		nanosleep(&ts, NULL);
	ts.tv_nsec = 300000000;
	if (!spins) {
		say("the blocker did not run\n");
		return 3;
	}
	if (!strcmp(argv[1], "exit")) {
		say("exit_group\n");
		_exit(4);
	}
	if (!strcmp(argv[1], "signal")) {
		say("SIGTERM\n");
		signal(SIGTERM, SIG_DFL);
		kill(getpid(), SIGTERM);
		nanosleep(&ts, NULL);
		return 5;
	}
	say("ready\n");
	ts.tv_sec = 60;
	ts.tv_nsec = 0;
	nanosleep(&ts, NULL);
	return 0;
}
