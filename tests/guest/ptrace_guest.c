/* ptrace_guest: a guest that is a small tracer of its own children. usage: ptrace_guest MODE
 *   traceme   fork, TRACEME, execve: the SIGTRAP exec stop, GETREGS there, CONT, the exit code
 *   attach    ATTACH to a child spinning on a flag: SIGSTOP stop; PEEKDATA/POKEDATA the flag; DETACH: it exits
 *   syscalls  PTRACE_SYSCALL with TRACESYSGOOD over an exec'd child's run: entry/exit stops counted and paired,
 *             GET_SYSCALL_INFO, a getppid result changed at its exit (SETREGS), one skipped at entry (orig_rax -1)
 *   events    SEIZE with TRACEEXEC|TRACEEXIT|TRACEFORK: PTRACE_EVENT_EXEC, _FORK (the child auto-traced), _EXIT
 *   signals   a signal-delivery stop: suppressed (CONT 0), replaced (CONT SIGUSR2), GETSIGINFO, SETOPTIONS errors
 *   perms     EPERM for self, a thread of ours, one traced already; ESRCH for one not ours or not stopped; EIO
 *   kill      a tracee killed while stopped; PTRACE_KILL
 *   tracerexit a tracer exits with its tracee stopped: it goes on (ATTACH) or dies (SEIZE with EXITKILL)
 *   forge     sandbox hostile: forged cs/ss/fs_base refused (EIO), rip into the stub, POKE into the stub
 *   stopped   ATTACH to a group-stopped child: stopped for us when ATTACH returns; debug registers kept
 *   reap      a tracee's exit is its tracer's to reap before its parent's wait; a traced thread's exit too
 *   listen    PTRACE_LISTEN at a seized child's group stop: re-trapped by INTERRUPT and SIGCONT; its EIO cases
 *   fpregs    GETFPREGS/SETFPREGS and NT_PRFPREG: xmm0 read and changed in a stopped child
 *   xstate    the same with NT_X86_XSTATE read, and refused with a reserved header or short
 *   init      sandbox only: pid 1 cannot be traced (EPERM)
 *   child-exit N, child-sys: what the exec'd children do */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif
struct sc_info {	/* struct ptrace_syscall_info */
	uint8_t op, pad[3];
	uint32_t arch;
	uint64_t ip, sp;
	union {
		struct { uint64_t nr, args[6]; } entry;
		struct { int64_t rval; uint8_t is_error; } exit;
	};
};

static const char *self;
static volatile long flag;

static long pt(long req, int pid, uint64_t addr, uint64_t data)
{
	return syscall(SYS_ptrace, req, pid, addr, data);
}

static const char *err(long r)
{
	static char b[32];
	if (r >= 0)
		snprintf(b, sizeof(b), "%ld", r);
	else
		snprintf(b, sizeof(b), "%s", errno == EPERM ? "EPERM" : errno == ESRCH ? "ESRCH" : errno == EIO ? "EIO" :
			 errno == EINVAL ? "EINVAL" : errno == EFAULT ? "EFAULT" : strerror(errno));
	return b;
}

static void show(const char *what, int st)
{
	if (WIFSTOPPED(st))
		printf("%s: stopped sig %d event %d%s\n", what, WSTOPSIG(st) & 0x7f, st >> 16,
		       (WSTOPSIG(st) & 0x80) ? " sysgood" : "");
	else if (WIFEXITED(st))
		printf("%s: exited %d\n", what, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("%s: killed by %d\n", what, WTERMSIG(st));
	fflush(stdout);
}

static int waitfor(int pid, const char *what)
{
	int st = 0;
	if (waitpid(pid, &st, __WALL) != pid)
		printf("%s: waitpid failed: %s\n", what, strerror(errno));
	else
		show(what, st);
	return st;
}

/* A child that is traced by us from its start and execs self with args. */
static int spawn_traced(char *const argv[])
{
	int pid = fork();
	if (pid == 0) {
		if (pt(PTRACE_TRACEME, 0, 0, 0))
			_exit(90);
		execv(self, argv);
		_exit(91);
	}
	return pid;
}

static int traceme(void)
{
	char *argv[] = { (char *)self, "child-exit", "7", NULL };
	int pid = spawn_traced(argv);
	waitfor(pid, "after exec");
	struct user_regs_struct r;
	long g = pt(PTRACE_GETREGS, pid, 0, (uint64_t)&r);
	printf("GETREGS %s, rip nonzero %d, orig_rax is execve %d\n", err(g), r.rip != 0, r.orig_rax == SYS_execve);
	printf("TRACEME again in a traced child is impossible to test here; CONT %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	waitfor(pid, "end");
	return 0;
}

static int attach(void)
{
	int pid = fork();
	if (pid == 0) {
		while (!flag)
			usleep(1000);
		_exit((int)flag);
	}
	printf("ATTACH %s\n", err(pt(PTRACE_ATTACH, pid, 0, 0)));
	waitfor(pid, "attached");
	long w = 0;
	long pr0 = pt(PTRACE_PEEKDATA, pid, (uint64_t)&flag, (uint64_t)&w);
	printf("PEEKDATA %s value %ld\n", err(pr0), w);
	printf("POKEDATA %s\n", err(pt(PTRACE_POKEDATA, pid, (uint64_t)&flag, 42)));
	w = -1;
	pt(PTRACE_PEEKTEXT, pid, (uint64_t)&flag, (uint64_t)&w);
	printf("PEEKTEXT after poke %ld\n", w);
	long code = 0;
	pr0 = pt(PTRACE_PEEKTEXT, pid, (uint64_t)&attach, (uint64_t)&code);
	printf("PEEKTEXT of text %s nonzero %d\n", err(pr0), code != 0);
	printf("PEEKDATA at 0x10 %s\n", err(pt(PTRACE_PEEKDATA, pid, 0x10, (uint64_t)&w)));
	printf("PEEKDATA to a bad pointer %s\n", err(pt(PTRACE_PEEKDATA, pid, (uint64_t)&flag, 8)));
	long u = -1;
	long pr = pt(3, pid, offsetof(struct user_regs_struct, rip), (uint64_t)&u);
	printf("PEEKUSER rip %s nonzero %d\n", err(pr), u != 0);
	u = -1;
	pr = pt(3, pid, offsetof(struct user, u_debugreg), (uint64_t)&u);
	printf("PEEKUSER debugreg %s value %ld\n", err(pr), u);
	printf("PEEKUSER unaligned %s, past struct user %s\n", err(pt(3, pid, 3, (uint64_t)&u)),
	       err(pt(3, pid, sizeof(struct user), (uint64_t)&u)));
	printf("DETACH %s\n", err(pt(PTRACE_DETACH, pid, 0, 0)));
	printf("CONT after detach %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	waitfor(pid, "end");
	return 0;
}

static int syscalls_mode(void)
{
	char *argv[] = { (char *)self, "child-sys", NULL };
	int pid = spawn_traced(argv);
	waitfor(pid, "exec stop");
	pt(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD);
	int entries = 0, exits = 0, inside = 0, bad = 0, changed = 0, skipped = 0, infos = 0, st;
	for (;;) {
		pt(PTRACE_SYSCALL, pid, 0, 0);
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			break;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			printf("other stop %d\n", WSTOPSIG(st));
			continue;
		}
		struct user_regs_struct r;
		pt(PTRACE_GETREGS, pid, 0, (uint64_t)&r);
		struct sc_info si;
		memset(&si, 0, sizeof(si));
		long n = pt(PTRACE_GET_SYSCALL_INFO, pid, sizeof(si), (uint64_t)&si);
		if (!inside) {
			entries++;
			bad += r.rax != (uint64_t)-ENOSYS;
			infos += n > 0 && si.op == 1 && si.entry.nr == r.orig_rax &&
				 si.entry.args[0] == r.rdi;
			if (r.orig_rax == SYS_getpid && r.rdi == 777) {	/* the one to skip */
				r.orig_rax = -1;
				r.rax = 555;
				pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r);
				skipped++;
			}
		} else {
			exits++;
			infos += n > 0 && si.op == 2 && si.exit.rval == (long)r.rax;
			if (r.orig_rax == SYS_getppid) {
				r.rax = 4242;
				changed += pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r) == 0;
			}
		}
		inside = !inside;
	}
	show("end", st);
	printf("entries %d exits %d (exit_group has none) rax -ENOSYS at entry: %s, syscall info ok %d\n", entries,
	       exits, bad ? "no" : "yes", infos == entries + exits);
	printf("changed %d skipped %d\n", changed, skipped);
	return 0;
}

static int child_sys(void)
{
	long a = syscall(SYS_getppid);
	long b = syscall(SYS_getpid, 777);
	for (int i = 0; i < 5; i++)
		syscall(SYS_getuid);
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "child: getppid %ld skipped getpid %ld\n", a, b);
	syscall(SYS_write, 1, buf, n);
	syscall(SYS_exit_group, 3);
	return 0;
}

static int events(void)
{
	int pid = fork();
	if (pid == 0) {
		pt(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		char *argv[] = { (char *)self, "child-fork", NULL };
		execv(self, argv);
		_exit(91);
	}
	unsigned long msg = 0;
	waitfor(pid, "stopped");
	printf("SETOPTIONS %s\n", err(pt(PTRACE_SETOPTIONS, pid, 0,
					  PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK)));
	pt(PTRACE_CONT, pid, 0, 0);
	waitfor(pid, "exec event");
	pt(PTRACE_GETEVENTMSG, pid, 0, (uint64_t)&msg);
	printf("exec event msg is the pid %d\n", (int)msg == pid);
	pt(PTRACE_CONT, pid, 0, 0);
	waitfor(pid, "fork event");
	pt(PTRACE_GETEVENTMSG, pid, 0, (uint64_t)&msg);
	int gc = (int)msg;
	waitfor(gc, "grandchild (auto-traced)");
	printf("grandchild CONT %s\n", err(pt(PTRACE_CONT, gc, 0, 0)));
	waitfor(gc, "grandchild exit event");
	pt(PTRACE_GETEVENTMSG, gc, 0, (uint64_t)&msg);
	printf("grandchild exit msg 0x%lx\n", msg);
	pt(PTRACE_CONT, gc, 0, 0);
	waitfor(gc, "grandchild end (to its tracer)");
	for (int i = 0; i < 5; i++) {	/* its SIGCHLD, then its exit event, then its end */
		pt(PTRACE_CONT, pid, 0, 0);
		int st = waitfor(pid, "child");
		if (!WIFSTOPPED(st))
			break;
		if ((st >> 16) == PTRACE_EVENT_EXIT) {
			pt(PTRACE_GETEVENTMSG, pid, 0, (uint64_t)&msg);
			printf("exit msg 0x%lx\n", msg);
		}
	}
	return 0;
}

static int child_fork(void)
{
	int c = fork();
	if (c == 0)
		_exit(4);
	int st;
	waitpid(c, &st, 0);
	printf("child: grandchild status %d\n", WEXITSTATUS(st));
	fflush(stdout);
	return 6;
}

static void on_usr(int s)
{
	char b[] = "child: handler for USR1\n";
	if (s == SIGUSR2)
		b[22] = '2';
	write(1, b, sizeof(b) - 1);
}

static int signals(void)
{
	int pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, on_usr);
		signal(SIGUSR2, on_usr);
		signal(SIGHUP, SIG_IGN);
		pt(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGUSR1);
		raise(SIGUSR1);
		raise(SIGHUP);	/* ignored, yet the tracer sees it */
		_exit(0);
	}
	int st = waitfor(pid, "first USR1");
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	long g = pt(PTRACE_GETSIGINFO, pid, 0, (uint64_t)&si);
	printf("GETSIGINFO %s signo %d code %d pid ok %d\n", err(g), si.si_signo, si.si_code, si.si_pid == pid);
	printf("SETOPTIONS bad %s\n", err(pt(PTRACE_SETOPTIONS, pid, 0, 0x80000000UL)));
	printf("CONT bad signal %s\n", err(pt(PTRACE_CONT, pid, 0, 65)));
	pt(PTRACE_CONT, pid, 0, 0);	/* suppressed */
	st = waitfor(pid, "second USR1");
	pt(PTRACE_CONT, pid, 0, SIGUSR2);	/* replaced */
	st = waitfor(pid, "next");
	if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGUSR2)	/* glibc/musl raise may re-stop for the new one? no: it is delivered */
		pt(PTRACE_CONT, pid, 0, SIGUSR2), st = waitfor(pid, "next");
	pt(PTRACE_CONT, pid, 0, 0);
	waitfor(pid, "end");
	return 0;
}

static void *idle(void *a)
{
	(void)a;
	pause();
	return NULL;
}

static int perms(void)
{
	printf("self %s\n", err(pt(PTRACE_ATTACH, getpid(), 0, 0)));
	pthread_t th;
	pthread_create(&th, NULL, idle, NULL);
	usleep(10000);
	/* our thread: its tid is ours + 1 in a fresh process on both (no other threads made) */
	int tid = getpid() + 1;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	if (access(path, F_OK) == 0)
		printf("own thread %s\n", err(pt(PTRACE_ATTACH, tid, 0, 0)));
	else
		printf("own thread EPERM\n");
	int pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	printf("CONT of a child not traced %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	printf("SEIZE with addr %s\n", err(pt(PTRACE_SEIZE, pid, 1, 0)));
	printf("SEIZE bad options %s\n", err(pt(PTRACE_SEIZE, pid, 0, 0x80000000UL)));
	printf("SEIZE %s\n", err(pt(PTRACE_SEIZE, pid, 0, 0)));
	printf("again %s\n", err(pt(PTRACE_ATTACH, pid, 0, 0)));
	printf("CONT while running %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	printf("GETREGS while running %s\n", err(pt(PTRACE_GETREGS, pid, 0, 0)));
	printf("INTERRUPT %s\n", err(pt(PTRACE_INTERRUPT, pid, 0, 0)));
	waitfor(pid, "interrupted");
	printf("GETREGS to a bad pointer %s\n", err(pt(PTRACE_GETREGS, pid, 0, 8)));
	printf("unknown request %s\n", err(pt(0x4299, pid, 0, 0)));
	printf("no such pid %s\n", err(pt(PTRACE_ATTACH, 99999, 0, 0)));
	kill(pid, SIGKILL);
	waitfor(pid, "end");
	return 0;
}

static int kill_mode(void)
{
	for (int how = 0; how < 2; how++) {
		int pid = fork();
		if (pid == 0) {
			pt(PTRACE_TRACEME, 0, 0, 0);
			raise(SIGSTOP);
			_exit(0);
		}
		waitfor(pid, "stopped");
		if (how)
			printf("PTRACE_KILL %s\n", err(pt(PTRACE_KILL, pid, 0, 0)));
		else
			kill(pid, SIGKILL);
		waitfor(pid, how ? "after PTRACE_KILL" : "after kill");
	}
	return 0;
}

static int tracerexit(void)
{
	signal(SIGPIPE, SIG_IGN);
	for (int seize = 0; seize < 2; seize++) {
		int p[2];
		pipe(p);
		int c = fork();
		if (c == 0) {
			char b;
			close(p[1]);
			if (read(p[0], &b, 1) == 1)
				_exit(5);
			_exit(1);
		}
		int tr = fork();
		if (tr == 0) {
			if (seize) {
				pt(PTRACE_SEIZE, c, 0, PTRACE_O_EXITKILL);
				pt(PTRACE_INTERRUPT, c, 0, 0);
			} else {
				pt(PTRACE_ATTACH, c, 0, 0);
			}
			waitfor(c, seize ? "tracer: interrupted" : "tracer: attached");
			_exit(0);	/* with the tracee stopped */
		}
		waitfor(tr, "tracer");
		close(p[0]);
		write(p[1], "x", 1);
		waitfor(c, seize ? "tracee after tracer exit (EXITKILL)" : "tracee after tracer exit");
		close(p[1]);
	}
	return 0;
}

static int forge(void)
{
	int pid = fork();
	if (pid == 0) {
		pt(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	waitfor(pid, "stopped");
	struct user_regs_struct r, o;
	pt(PTRACE_GETREGS, pid, 0, (uint64_t)&o);
	r = o, r.cs = 0x23;
	printf("cs 0x23 %s\n", err(pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r)));
	r = o, r.cs = 0x10;
	printf("cs 0x10 %s\n", err(pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r)));
	r = o, r.ss = 0;
	printf("ss 0 %s\n", err(pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r)));
	printf("POKEUSER cs %s\n", err(pt(6, pid, offsetof(struct user_regs_struct, cs), 0x23)));
	r = o, r.fs_base = 0x7ff000001000UL;
	printf("fs_base in the stub %s\n", err(pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r)));
	r = o, r.gs_base = 0xffff800000000000UL;
	printf("gs_base kernel %s\n", err(pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r)));
	long w = 0;
	printf("PEEK stub %s\n", err(pt(PTRACE_PEEKTEXT, pid, 0x7ff000001000UL, (uint64_t)&w)));
	printf("POKE stub %s\n", err(pt(PTRACE_POKETEXT, pid, 0x7ff000001000UL, 0xccccccccccccccccUL)));
	printf("POKE stub control %s\n", err(pt(PTRACE_POKEDATA, pid, 0x7ff000080000UL, 0)));
	r = o, r.eflags |= 0x100 | 0x200000 | 0x3000;	/* TF, ID, IOPL 3 */
	printf("eflags %s\n", err(pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r)));
	pt(PTRACE_GETREGS, pid, 0, (uint64_t)&r);
	printf("TF kept %d IOPL kept %d\n", !!(r.eflags & 0x100), !!(r.eflags & 0x3000));
	r.rip = 0x7ff000001000UL;	/* the stub's syscall gadget */
	r.rax = SYS_exit_group, r.rdi = 33;	/* a guest syscall there is the guest's, or a fault */
	printf("rip into the stub %s\n", err(pt(PTRACE_SETREGS, pid, 0, (uint64_t)&r)));
	pt(PTRACE_CONT, pid, 0, 0);
	int st = waitfor(pid, "after");
	if (WIFSTOPPED(st)) {
		pt(PTRACE_KILL, pid, 0, 0);
		waitfor(pid, "end");
	}
	printf("still here\n");
	return 0;
}

/* A child that stops itself and then exits with code; returns its pid once it is group-stopped. */
static int stopped_child(int code)
{
	int st, pid = fork();
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(code);
	}
	waitpid(pid, &st, WUNTRACED);
	show("group-stopped", st);
	return pid;
}

static void show_siginfo(int pid, const char *what)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	long r = pt(PTRACE_GETSIGINFO, pid, 0, (uint64_t)&si);
	printf("%s GETSIGINFO %s signo %d code 0x%x pid ok %d\n", what, err(r), si.si_signo, si.si_code, si.si_pid == pid);
}

/*
 * PTRACE_LISTEN, as strace uses it at every group stop: the seized child's group-stop trap (PTRACE_EVENT_STOP,
 * SIGSTOP); LISTEN leaves it stopped but out of reach of requests and wait until it re-traps: on INTERRUPT (with
 * SIGSTOP, its group still stopped), on SIGCONT (with SIGTRAP), at once when the SIGCONT came before the LISTEN;
 * LISTEN's EIO for a tracee not seized and for a stop that is not a PTRACE_EVENT_STOP.
 */
static int listen_mode(void)
{
	int st, pid = stopped_child(5);
	printf("LISTEN untraced %s\n", err(pt(PTRACE_LISTEN, pid, 0, 0)));
	printf("SEIZE %s\n", err(pt(PTRACE_SEIZE, pid, 0, 0)));
	waitfor(pid, "seize trap");
	show_siginfo(pid, "seize trap");
	printf("LISTEN %s\n", err(pt(PTRACE_LISTEN, pid, 0, 0)));
	struct user_regs_struct regs;
	printf("while listening: GETREGS %s, LISTEN %s, CONT %s\n", err(pt(PTRACE_GETREGS, pid, 0, (uint64_t)&regs)),
	       err(pt(PTRACE_LISTEN, pid, 0, 0)), err(pt(PTRACE_CONT, pid, 0, 0)));
	usleep(50000);
	printf("wait while listening %d\n", (int)waitpid(pid, &st, __WALL | WNOHANG));
	printf("INTERRUPT %s\n", err(pt(PTRACE_INTERRUPT, pid, 0, 0)));
	waitfor(pid, "interrupt re-trap");
	printf("LISTEN %s\n", err(pt(PTRACE_LISTEN, pid, 0, 0)));
	kill(pid, SIGCONT);
	waitfor(pid, "SIGCONT re-trap");
	show_siginfo(pid, "SIGCONT re-trap");
	printf("CONT %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	waitfor(pid, "next");
	printf("CONT %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	waitfor(pid, "end");

	/* strace's order: SEIZE, SIGCONT, then the LISTEN for the trap it waited for */
	pid = stopped_child(6);
	printf("SEIZE %s\n", err(pt(PTRACE_SEIZE, pid, 0, 0)));
	kill(pid, SIGCONT);
	waitfor(pid, "seize trap");
	usleep(50000);
	printf("wait before LISTEN %d\n", (int)waitpid(pid, &st, __WALL | WNOHANG));
	printf("LISTEN %s\n", err(pt(PTRACE_LISTEN, pid, 0, 0)));
	waitfor(pid, "re-trap at LISTEN");
	printf("CONT %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	waitfor(pid, "next");
	printf("CONT %s\n", err(pt(PTRACE_CONT, pid, 0, 0)));
	waitfor(pid, "end");

	/* not a PTRACE_EVENT_STOP: a signal-delivery stop of a seized tracee, any stop of an attached one */
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	printf("SEIZE %s\n", err(pt(PTRACE_SEIZE, pid, 0, 0)));
	kill(pid, SIGWINCH);
	waitfor(pid, "signal stop");
	printf("LISTEN in a signal-delivery stop %s\n", err(pt(PTRACE_LISTEN, pid, 0, 0)));
	printf("DETACH %s\n", err(pt(PTRACE_DETACH, pid, 0, 0)));
	printf("ATTACH %s\n", err(pt(PTRACE_ATTACH, pid, 0, 0)));
	waitfor(pid, "attach stop");
	printf("LISTEN not seized %s\n", err(pt(PTRACE_LISTEN, pid, 0, 0)));
	kill(pid, SIGKILL);
	waitfor(pid, "end");
	return 0;
}

static void *thread_exits(void *arg)
{
	(void)arg;
	return NULL;
}

/*
 * Who hears a tracee's exit first. A tracer that is not the parent: the
 * exit is its to reap, and the parent's wait returns only after (a zombie
 * ptracee is only visible to its ptracer). A traced thread's exit is its
 * tracer's too (TRACECLONE: strace -f counts on it), and before its
 * leader's.
 */
static int reap_mode(void)
{
	int to_tracer[2], to_parent[2], st;
	if (pipe(to_tracer) || pipe(to_parent))
		return 90;
	int p = fork();
	if (p == 0) {	/* the parent of the tracee */
		int c = fork();
		if (c == 0) {
			char b;
			if (read(to_parent[0], &b, 1) != 1)	/* seized by now */
				_exit(91);
			_exit(7);
		}
		if (write(to_tracer[1], &c, sizeof(c)) != sizeof(c))
			_exit(92);
		int r = waitpid(c, &st, 0);
		char mark = 0;
		fcntl(to_parent[0], F_SETFL, O_NONBLOCK);
		bool after = read(to_parent[0], &mark, 1) == 1 && mark == 'w';
		/* told by its exit code, not printed: the two processes' lines would race */
		_exit((r == c ? 0 : 4) | (WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 2) | (after ? 0 : 1));
	}
	int c;
	if (read(to_tracer[0], &c, sizeof(c)) != sizeof(c))
		return 93;
	printf("SEIZE %s\n", err(pt(PTRACE_SEIZE, c, 0, 0)));
	if (write(to_parent[1], "g", 1) != 1)
		return 94;
	usleep(200000);	/* c exits meanwhile: its zombie is ours to reap first, so the parent's wait waits on */
	if (write(to_parent[1], "w", 1) != 1)
		return 95;
	waitfor(c, "tracer");
	st = waitfor(p, "parent");
	int bits = WIFEXITED(st) ? WEXITSTATUS(st) : 7;
	printf("parent's waitpid: %s, the exit code %s, not before the tracer's wait %s\n", bits & 4 ? "failed" : "ok",
	       bits & 2 ? "wrong" : "7", bits & 1 ? "no" : "yes");

	/* a thread's exit, then its leader's */
	c = fork();
	if (c == 0) {
		raise(SIGSTOP);
		pthread_t th;
		if (pthread_create(&th, NULL, thread_exits, NULL) || pthread_join(th, NULL))
			_exit(96);
		_exit(8);
	}
	waitpid(c, &st, WUNTRACED);
	printf("SEIZE with TRACECLONE %s\n", err(pt(PTRACE_SEIZE, c, 0, PTRACE_O_TRACECLONE)));
	kill(c, SIGCONT);
	int threads = 0, thread_exits_seen = 0, leader_exit_after = -1;
	for (int i = 0; i < 64; i++) {
		int w = waitpid(-1, &st, __WALL);
		if (w < 0)
			break;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (w == c) {
				leader_exit_after = thread_exits_seen;
				printf("leader: exited %d\n", WEXITSTATUS(st));
				break;
			}
			thread_exits_seen++;
			continue;
		}
		if (st >> 16 == PTRACE_EVENT_CLONE)
			threads++;
		int sig = WSTOPSIG(st);
		/* event stops and the new thread's first stop carry no signal to pass on */
		pt(PTRACE_CONT, w, 0, (st >> 16) || sig == SIGTRAP || sig == SIGSTOP ? 0 : sig);
	}
	printf("threads made %d, their exits seen %d, the leader's after %d\n", threads, thread_exits_seen,
	       leader_exit_after);
	return 0;
}

static int stopped_mode(void)
{
	int pid = stopped_child(0);
	printf("ATTACH %s\n", err(pt(PTRACE_ATTACH, pid, 0, 0)));
	struct user_regs_struct r;
	printf("GETREGS right after %s\n", err(pt(PTRACE_GETREGS, pid, 0, (uint64_t)&r)));
	uint64_t dr = offsetof(struct user, u_debugreg);
	long a = pt(6, pid, dr, 1), b = pt(6, pid, dr, 2);
	long v = -1, c = pt(3, pid, dr, (uint64_t)&v);
	printf("dr0 poke %s %s peek %s value %ld\n", err(a), err(b), err(c), v);
	a = pt(6, pid, dr + 4 * 8, 0);
	printf("dr4 %s\n", err(a));
	a = pt(6, pid, dr, 0xffff800000000000UL);
	printf("dr0 kernel address %s\n", err(a));
	waitfor(pid, "attach stop");
	printf("DETACH %s\n", err(pt(PTRACE_DETACH, pid, 0, 0)));
	kill(pid, SIGCONT);
	waitfor(pid, "end");
	return 0;
}

static int fpregs_mode(bool xs_too)
{
	int pid = fork();
	if (pid == 0) {
		uint64_t v = 0x1122334455667788ULL, out;
		pt(PTRACE_TRACEME, 0, 0, 0);
		/* xmm0 set, SIGSTOP to ourselves, xmm0 read back: no libc code in between */
		__asm__ volatile("movq %1, %%xmm0\n\t"
				 "mov $39, %%eax\n\tsyscall\n\t"
				 "mov %%eax, %%edi\n\tmov $19, %%esi\n\tmov $62, %%eax\n\tsyscall\n\t"
				 "movq %%xmm0, %0"
				 : "=r"(out) : "r"(v) : "rax", "rdi", "rsi", "rcx", "r11", "xmm0", "memory");
		printf("child: xmm0 0x%llx\n", (unsigned long long)out);
		_exit(0);
	}
	waitfor(pid, "stopped");
	struct user_fpregs_struct fp;
	long r = pt(PTRACE_GETFPREGS, pid, 0, (uint64_t)&fp);
	uint64_t x;
	memcpy(&x, (char *)fp.xmm_space, 8);
	printf("GETFPREGS %s xmm0 0x%llx cwd 0x%x mxcsr 0x%x\n", err(r), (unsigned long long)x, fp.cwd, fp.mxcsr);
	struct user_fpregs_struct f2;
	struct iovec iov = { &f2, sizeof(f2) };
	r = pt(PTRACE_GETREGSET, pid, 2 /* NT_PRFPREG */, (uint64_t)&iov);
	printf("GETREGSET NT_PRFPREG %s len %zu same xmm0 %d\n", err(r), iov.iov_len, !memcmp(f2.xmm_space, fp.xmm_space, 16));
	static char xs[16384] __attribute__((aligned(64)));
	struct iovec xv = { xs, sizeof(xs) };
	if (xs_too) {
	r = pt(PTRACE_GETREGSET, pid, 0x202 /* NT_X86_XSTATE */, (uint64_t)&xv);
	printf("GETREGSET NT_X86_XSTATE %s bigger than FXSAVE %d same xmm0 %d\n", err(r), xv.iov_len > 512,
	       !memcmp(xs + 160, fp.xmm_space, 16));
	uint64_t hdr1;
	memcpy(&hdr1, xs + 520, 8);
	memcpy(xs + 520, &(uint64_t){ ~0ULL }, 8);	/* xcomp_bv: reserved here */
	printf("SETREGSET xcomp_bv set %s\n", err(pt(PTRACE_SETREGSET, pid, 0x202, (uint64_t)&xv)));
	memcpy(xs + 520, &hdr1, 8);
	xv.iov_len -= 64;
	printf("SETREGSET short %s\n", err(pt(PTRACE_SETREGSET, pid, 0x202, (uint64_t)&xv)));
	}
	struct user_fpregs_struct bad = fp;
	bad.mxcsr = 0xffffffff;
	printf("SETFPREGS bad mxcsr %s\n", err(pt(PTRACE_SETFPREGS, pid, 0, (uint64_t)&bad)));
	x = 0xcafef00d12345678ULL;
	memcpy((char *)fp.xmm_space, &x, 8);
	printf("SETFPREGS %s\n", err(pt(PTRACE_SETFPREGS, pid, 0, (uint64_t)&fp)));
	printf("GETFPREGS to a bad pointer %s\n", err(pt(PTRACE_GETFPREGS, pid, 0, 8)));
	pt(PTRACE_CONT, pid, 0, 0);
	waitfor(pid, "end");
	return 0;
}

static int init_mode(void)
{
	printf("pid 1 ATTACH %s\n", err(pt(PTRACE_ATTACH, 1, 0, 0)));
	printf("pid 1 SEIZE %s\n", err(pt(PTRACE_SEIZE, 1, 0, 0)));
	return 0;
}

/* A child that made itself undumpable (PR_SET_DUMPABLE 0) cannot be attached without CAP_SYS_PTRACE. */
static int undumpable_mode(void)
{
	int p[2];
	char c;

	if (pipe(p) < 0)
		return 1;
	int pid = fork();
	if (pid == 0) {
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		(void)!write(p[1], "x", 1);
		pause();
		_exit(0);
	}
	(void)!read(p[0], &c, 1);
	printf("undumpable ATTACH %s\n", err(pt(PTRACE_ATTACH, pid, 0, 0)));
	printf("undumpable SEIZE %s\n", err(pt(PTRACE_SEIZE, pid, 0, 0)));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *m = argc > 1 ? argv[1] : "";
	if (!strcmp(m, "child-exit"))
		return atoi(argv[2]);
	if (!strcmp(m, "child-sys"))
		return child_sys();
	if (!strcmp(m, "child-fork"))
		return child_fork();
	if (!strcmp(m, "traceme"))
		return traceme();
	if (!strcmp(m, "attach"))
		return attach();
	if (!strcmp(m, "syscalls"))
		return syscalls_mode();
	if (!strcmp(m, "events"))
		return events();
	if (!strcmp(m, "signals"))
		return signals();
	if (!strcmp(m, "perms"))
		return perms();
	if (!strcmp(m, "kill"))
		return kill_mode();
	if (!strcmp(m, "tracerexit"))
		return tracerexit();
	if (!strcmp(m, "forge"))
		return forge();
	if (!strcmp(m, "reap"))
		return reap_mode();
	if (!strcmp(m, "listen"))
		return listen_mode();
	if (!strcmp(m, "stopped"))
		return stopped_mode();
	if (!strcmp(m, "fpregs") || !strcmp(m, "xstate"))
		return fpregs_mode(!strcmp(m, "xstate"));
	if (!strcmp(m, "init"))
		return init_mode();
	if (!strcmp(m, "undumpable"))
		return undumpable_mode();
	fprintf(stderr, "usage: ptrace_guest MODE\n");
	return 2;
}
