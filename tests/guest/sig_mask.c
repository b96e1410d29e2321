/* sig_mask: signal masks, pending signals and handler flags.
 * usage: sig_mask pending|suspend|resethand|nodefer|samask|order|fork|unblockable|query|sigwait
 * Prints what happened, in order; the caller compares with the native run. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

static volatile sig_atomic_t hits, depth, maxdepth;
static char log_[256];
static volatile int loglen;
static int reraise;

static int blocked(int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static void handler(int sig)
{
	hits++;
	depth++;
	if (depth > maxdepth)
		maxdepth = depth;
	if (loglen < 250) {
		log_[loglen++] = sig == SIGUSR1 ? '1' : sig == SIGUSR2 ? '2' : sig == SIGTERM ? 'T' : sig == SIGHUP ? 'H' : '?';
		log_[loglen++] = blocked(SIGUSR1) ? 'b' : 'u';
		log_[loglen++] = blocked(SIGUSR2) ? 'b' : 'u';
		log_[loglen++] = ' ';
	}
	if (reraise && hits == 1)
		raise(sig);
	depth--;
}

static void install(int sig, int flags, int masked)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (masked)
		sigaddset(&sa.sa_mask, masked);
	if (sigaction(sig, &sa, NULL))
		say("sigaction failed: %d\n", errno);
}

static void show_log(const char *what)
{
	log_[loglen] = 0;
	say("%s: hits=%d maxdepth=%d log=[%s]\n", what, (int)hits, (int)maxdepth, log_);
	hits = maxdepth = 0;
	loglen = 0;
}

static void block(int how, int sig)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(how, &s, NULL);
}

static int is_pending(int sig)
{
	sigset_t p;
	sigpending(&p);
	return sigismember(&p, sig);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pending";
	if (!strcmp(mode, "pending")) {
		install(SIGUSR1, 0, 0);
		block(SIG_BLOCK, SIGUSR1);
		raise(SIGUSR1);
		raise(SIGUSR1); /* standard signals do not queue */
		say("while blocked: hits=%d pending=%s\n", (int)hits, yesno(is_pending(SIGUSR1)));
		block(SIG_UNBLOCK, SIGUSR1);
		/* delivered before sigprocmask returns */
		int h = hits;
		say("right after unblock: hits=%d pending=%s\n", h, yesno(is_pending(SIGUSR1)));
		/* SIG_SETMASK and the old mask */
		sigset_t s, old;
		sigemptyset(&s);
		sigaddset(&s, SIGUSR2);
		sigaddset(&s, SIGHUP);
		sigprocmask(SIG_SETMASK, &s, &old);
		say("old mask had USR1: %s\n", yesno(sigismember(&old, SIGUSR1)));
		sigprocmask(SIG_SETMASK, NULL, &old);
		say("mask now: USR2=%s HUP=%s USR1=%s\n", yesno(sigismember(&old, SIGUSR2)),
		    yesno(sigismember(&old, SIGHUP)), yesno(sigismember(&old, SIGUSR1)));
		/* an ignored signal is discarded even while blocked */
		signal(SIGUSR2, SIG_IGN);
		raise(SIGUSR2);
		say("ignored+blocked USR2 pending: %s\n", yesno(is_pending(SIGUSR2)));
		/* a pending blocked signal is discarded when its action becomes SIG_IGN */
		install(SIGHUP, 0, 0);
		raise(SIGHUP);
		say("HUP pending: %s\n", yesno(is_pending(SIGHUP)));
		signal(SIGHUP, SIG_IGN);
		say("HUP pending after SIG_IGN: %s\n", yesno(is_pending(SIGHUP)));
		/* bad how */
		errno = 0;
		int r = sigprocmask(12345, &s, NULL);
		say("sigprocmask(bad how) = %d %s\n", r, errno == EINVAL ? "EINVAL" : "?");
		/* raw rt_sigprocmask with a wrong sigsetsize */
		r = syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &old, 4);
		say("rt_sigprocmask(sigsetsize 4) = %d %s\n", r, errno == EINVAL ? "EINVAL" : "?");
		return 0;
	}
	if (!strcmp(mode, "pending2")) {
		/* Linux keeps a thread-directed (tgkill/raise) and a process-directed (kill) pending set: the same
		 * standard signal can be pending once in each, and both are delivered */
		install(SIGUSR1, 0, 0);
		block(SIG_BLOCK, SIGUSR1);
		raise(SIGUSR1);
		kill(getpid(), SIGUSR1);
		kill(getpid(), SIGUSR1);
		block(SIG_UNBLOCK, SIGUSR1);
		say("raise + kill + kill while blocked, then unblock: hits=%d\n", (int)hits);
		return 0;
	}
	if (!strcmp(mode, "suspend")) {
		install(SIGUSR1, 0, 0);
		block(SIG_BLOCK, SIGUSR1);
		pid_t parent = getpid();
		pid_t c = signal_us_later(SIGUSR1, 50000);
		sigset_t empty;
		sigemptyset(&empty);
		errno = 0;
		int r = sigsuspend(&empty);
		say("sigsuspend = %d %s hits=%d\n", r, errno == EINTR ? "EINTR" : "?", (int)hits);
		say("USR1 blocked again after sigsuspend: %s\n", yesno(blocked(SIGUSR1)));
		/* a signal already pending: sigsuspend returns at once */
		raise(SIGUSR1);
		r = sigsuspend(&empty);
		say("sigsuspend with pending = %d hits=%d\n", r, (int)hits);
		/* sigsuspend with a mask that keeps USR1 blocked waits for USR2 instead */
		install(SIGUSR2, 0, 0);
		c = fork();
		if (c == 0) {
			usleep(30000);
			kill(parent, SIGUSR1);
			usleep(30000);
			kill(parent, SIGUSR2);
			_exit(0);
		}
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, SIGUSR1);
		r = sigsuspend(&m);
		show_log("sigsuspend(mask USR1) woke by");
		say("USR1 pending after: %s\n", yesno(is_pending(SIGUSR1)));
		block(SIG_UNBLOCK, SIGUSR1);
		show_log("after unblock");
		while (wait(NULL) > 0 || errno == EINTR)
			;
		return 0;
	}
	if (!strcmp(mode, "resethand")) {
		install(SIGUSR1, SA_RESETHAND, 0);
		raise(SIGUSR1);
		show_log("first USR1 (SA_RESETHAND)");
		struct sigaction cur;
		sigaction(SIGUSR1, NULL, &cur);
		say("disposition now SIG_DFL: %s\n", yesno(cur.sa_handler == SIG_DFL));
		say("raising USR1 again: default action terminates\n");
		raise(SIGUSR1);
		say("still alive?\n");
		return 0;
	}
	if (!strcmp(mode, "nodefer")) {
		reraise = 1;
		install(SIGUSR1, 0, 0);
		raise(SIGUSR1);
		show_log("without SA_NODEFER, raise inside the handler");
		install(SIGUSR1, SA_NODEFER, 0);
		raise(SIGUSR1);
		show_log("with SA_NODEFER, raise inside the handler");
		return 0;
	}
	if (!strcmp(mode, "samask")) {
		install(SIGUSR1, 0, SIGUSR2);
		install(SIGUSR2, 0, 0);
		raise(SIGUSR1);
		show_log("USR1 handler with sa_mask={USR2}");
		say("after return USR2 blocked: %s\n", yesno(blocked(SIGUSR2)));
		return 0;
	}
	if (!strcmp(mode, "order")) {
		/* several pending signals released at once */
		install(SIGUSR1, 0, 0);
		install(SIGUSR2, 0, 0);
		install(SIGHUP, 0, 0);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigaddset(&s, SIGUSR2);
		sigaddset(&s, SIGHUP);
		sigprocmask(SIG_BLOCK, &s, NULL);
		raise(SIGUSR2);
		raise(SIGHUP);
		raise(SIGUSR1);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		show_log("three pending released");
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		install(SIGUSR1, 0, 0);
		signal(SIGUSR2, SIG_IGN);
		block(SIG_BLOCK, SIGHUP);
		raise(SIGHUP); /* pending in the parent only */
		pid_t c = fork();
		if (c == 0) {
			struct sigaction a, b;
			sigaction(SIGUSR1, NULL, &a);
			sigaction(SIGUSR2, NULL, &b);
			say("child: USR1 handler inherited: %s, USR2 ignored: %s, HUP blocked: %s, HUP pending: %s\n",
			    yesno(a.sa_handler == handler), yesno(b.sa_handler == SIG_IGN), yesno(blocked(SIGHUP)),
			    yesno(is_pending(SIGHUP)));
			raise(SIGUSR1);
			say("child: handler ran %d\n", (int)hits);
			_exit(0);
		}
		int st;
		waitpid(c, &st, 0);
		say("parent: HUP still pending: %s, child status %d\n", yesno(is_pending(SIGHUP)), WEXITSTATUS(st));
		signal(SIGHUP, SIG_IGN);
		return 0;
	}
	if (!strcmp(mode, "unblockable")) {
		sigset_t s, cur;
		sigfillset(&s);
		sigprocmask(SIG_SETMASK, &s, NULL);
		sigprocmask(SIG_SETMASK, NULL, &cur);
		say("after blocking everything: KILL blocked=%s STOP blocked=%s TERM blocked=%s\n",
		    yesno(sigismember(&cur, SIGKILL)), yesno(sigismember(&cur, SIGSTOP)), yesno(sigismember(&cur, SIGTERM)));
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler;
		int r, e;
#define TRY(label, expr) do { errno = 0; r = (expr); e = errno; \
	say("%s = %d %s\n", label, r, r == 0 ? "" : e == EINVAL ? "EINVAL" : e == ESRCH ? "ESRCH" : "E?"); } while (0)
		TRY("sigaction(SIGKILL)", sigaction(SIGKILL, &sa, NULL));
		TRY("sigaction(SIGSTOP)", sigaction(SIGSTOP, &sa, NULL));
		TRY("sigaction(SIGKILL, query only)", sigaction(SIGKILL, NULL, &sa));
		TRY("sigaction(0)", sigaction(0, &sa, NULL));
		TRY("rt_sigaction(65)", (int)syscall(SYS_rt_sigaction, 65, NULL, NULL, 8));
		TRY("rt_sigaction(bad sigsetsize)", (int)syscall(SYS_rt_sigaction, SIGUSR1, NULL, &sa, 4));
		TRY("kill(self, 0)", kill(getpid(), 0));
		TRY("kill(self, 99)", kill(getpid(), 99));
		TRY("kill(99999, SIGUSR1)", kill(99999, SIGUSR1));
		TRY("kill(99999, 0)", kill(99999, 0));
		/* SIGKILL kills even with everything blocked */
		say("sending SIGKILL to self\n");
		kill(getpid(), SIGKILL);
		say("still alive?\n");
		return 0;
	}
	if (!strcmp(mode, "query")) {
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler;
		sa.sa_flags = SA_RESTART | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGTERM);
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGUSR1, NULL, &old);
		say("query: handler=%s RESTART=%s NODEFER=%s SIGINFO=%s mask has TERM=%s USR2=%s\n",
		    yesno(old.sa_handler == handler), yesno(old.sa_flags & SA_RESTART), yesno(old.sa_flags & SA_NODEFER),
		    yesno(old.sa_flags & SA_SIGINFO), yesno(sigismember(&old.sa_mask, SIGTERM)),
		    yesno(sigismember(&old.sa_mask, SIGUSR2)));
		struct sigaction d;
		sigaction(SIGCHLD, NULL, &d);
		say("default SIGCHLD is SIG_DFL: %s\n", yesno(d.sa_handler == SIG_DFL));
		/* default-ignored signals do nothing */
		raise(SIGCHLD);
		raise(SIGWINCH);
		raise(SIGURG);
		say("survived SIGCHLD, SIGWINCH, SIGURG with default actions\n");
		return 0;
	}
	if (!strcmp(mode, "sigwait")) {
		/* sigwaitinfo/sigtimedwait/sigwait take blocked signals without running handlers */
		install(SIGUSR1, 0, 0);
		block(SIG_BLOCK, SIGUSR1);
		block(SIG_BLOCK, SIGUSR2);
		block(SIG_BLOCK, SIGCHLD);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGUSR2);
		raise(SIGUSR2);
		raise(SIGUSR1);
		siginfo_t si;
		int a = sigwaitinfo(&set, &si);
		int b = sigwaitinfo(&set, &si);
		say("two pending: took %d then %d (lowest first), code SI_TKILL: %s, handler ran %d\n", a, b,
		    yesno(si.si_code == SI_TKILL), (int)hits);
		struct timespec ts = { 0, 20000000 };
		errno = 0;
		int r = sigtimedwait(&set, &si, &ts);
		say("none pending, 20 ms: %d %s\n", r, errno == EAGAIN ? "EAGAIN" : "?");
		ts = (struct timespec){ 0, 0 };
		r = sigtimedwait(&set, &si, &ts);
		say("zero timeout: %d %s\n", r, errno == EAGAIN ? "EAGAIN" : "?");
		/* sent while waiting: process-directed, from a child; the default-ignored SIGCHLD is kept */
		pid_t c = signal_us_later(SIGUSR2, 30000);
		ts = (struct timespec){ 5, 0 };
		r = sigtimedwait(&set, &si, &ts);
		say("sent by a child while waiting: %d, si_pid is the child: %s, SI_USER: %s\n", r,
		    yesno(si.si_pid == c), yesno(si.si_code == SI_USER));
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		r = sigwaitinfo(&chld, &si);
		say("SIGCHLD (default ignore, blocked) waited for: %d, CLD_EXITED: %s, status %d\n", r,
		    yesno(si.si_code == CLD_EXITED), si.si_status);
		wait_child(c);
		int sig = 0;
		raise(SIGUSR1);
		r = sigwait(&set, &sig);
		say("sigwait = %d, sig %d, handler ran %d, still blocked: %s\n", r, sig, (int)hits,
		    yesno(blocked(SIGUSR1)));
		/* another signal, unblocked, interrupts the wait and its handler runs */
		install(SIGHUP, 0, 0);
		c = signal_when_asleep(SIGHUP);
		errno = 0;
		ts = (struct timespec){ 5, 0 };
		r = sigtimedwait(&set, &si, &ts);
		say("SIGHUP (not in the set, handled) during the wait: %d %s, handler ran %d\n", r,
		    errno == EINTR ? "EINTR" : "?", (int)hits);
		wait_child(c);
		errno = 0;
		r = syscall(SYS_rt_sigtimedwait, &set, NULL, NULL, 4);
		say("sigsetsize 4: %d %s\n", r, errno == EINVAL ? "EINVAL" : "?");
		ts = (struct timespec){ 0, -1 };
		errno = 0;
		r = sigtimedwait(&set, &si, &ts);
		say("bad timeout: %d %s\n", r, errno == EINVAL ? "EINVAL" : "?");
		return 0;
	}
	say("unknown mode %s\n", mode);
	return 2;
}
