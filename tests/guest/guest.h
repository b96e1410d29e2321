/* Helpers shared by the process and signal test guests (tests/guest/proc_*.c, sig_*.c). */
#ifndef PVX_TEST_GUEST_H
#define PVX_TEST_GUEST_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* The state letter of a /proc/PID[/task/TID]/stat file, 0 when it cannot be read (the task is gone). */
static __attribute__((unused)) char stat_file_state(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	char *p = f && fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
	if (f)
		fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Whether pid is asleep (state S in /proc/PID/stat): blocked in a call that waits. */
static __attribute__((unused)) int proc_asleep(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	return stat_file_state(path) == 'S';
}

/*
 * A child that sends sig to us once we sleep in the blocking call that follows (10 s at most, then it sends
 * it anyway), then, with wake_fd >= 0, writes a byte there 20 ms later (to end a wait the signal must not
 * end), and exits 0; returns its pid. For a signal that must arrive *during* a wait: a fixed delay
 * (signal_us_later) can end before a slow machine (QEMU's software CPU) has even entered the call.
 */
static __attribute__((unused)) pid_t signal_when_asleep_then(int sig, int wake_fd)
{
	pid_t parent = getpid(), c = fork();

	if (c == 0) {
		for (int i = 0; i < 10000 && !proc_asleep(parent); i++)
			usleep(1000);
		kill(parent, sig);
		if (wake_fd >= 0) {
			usleep(20000);
			_exit(write(wake_fd, "y", 1) == 1 ? 0 : 1);
		}
		_exit(0);
	}
	return c;
}

static __attribute__((unused)) pid_t signal_when_asleep(int sig)
{
	return signal_when_asleep_then(sig, -1);
}

#endif
