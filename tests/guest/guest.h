/* Helpers shared by the process and signal test guests (tests/guest/proc_*.c, sig_*.c). */
#ifndef PVX_TEST_GUEST_H
#define PVX_TEST_GUEST_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* printf straight to fd 1 with one write(): no stdio buffer to duplicate across fork. */
static __attribute__((unused, format(printf, 1, 2))) void say(const char *fmt, ...)
{
	char b[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	if (write(1, b, n) < 0)
		_exit(99);
}

static __attribute__((unused)) const char *yesno(int c) { return c ? "yes" : "no"; }

/* The symbolic name of an errno value ("0" for none), the same in musl and glibc builds. */
static __attribute__((unused)) const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EINTR: return "EINTR";
	case EBADF: return "EBADF";
	case ECHILD: return "ECHILD";
	case EAGAIN: return "EAGAIN";
	case EDEADLK: return "EDEADLK";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ESPIPE: return "ESPIPE";
	case EFBIG: return "EFBIG";
	case EPIPE: return "EPIPE";
	case ENOSYS: return "ENOSYS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	default: return "E?";
	}
}

/* The child's exit code, or 128+signal, as a shell reports it. */
static __attribute__((unused)) int wait_child(pid_t c)
{
	int st;
	while (waitpid(c, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A child that sends sig to us after delay_us, then exits 0; returns its pid. */
static __attribute__((unused)) pid_t signal_us_later(int sig, unsigned delay_us)
{
	pid_t parent = getpid(), c = fork();

	if (c == 0) {
		usleep(delay_us);
		kill(parent, sig);
		_exit(0);
	}
	return c;
}

#endif
