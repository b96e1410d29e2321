/* Helpers shared by the event and network test guests (tests/guest/ev_*.c, net_*.c, io_splice.c): results
 * printed as "3" or "-1 EINVAL" with errno names that are the same in musl and glibc builds. */
#ifndef PVX_TEST_EVNET_H
#define PVX_TEST_EVNET_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "guest.h"

/* The symbolic name of any errno these guests may see ("E<number>" for others). */
static __attribute__((unused)) const char *ename(int e)
{
	static char other[4][16];
	static int next;
	switch (e) {
	case ELOOP: return "ELOOP";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EINPROGRESS: return "EINPROGRESS";
	case EALREADY: return "EALREADY";
	case EADDRINUSE: return "EADDRINUSE";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case EROFS: return "EROFS";
	case ENOTCONN: return "ENOTCONN";
	case EISCONN: return "EISCONN";
	case ENOTSOCK: return "ENOTSOCK";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case EPROTOTYPE: return "EPROTOTYPE";
	case ESOCKTNOSUPPORT: return "ESOCKTNOSUPPORT";
	case EMSGSIZE: return "EMSGSIZE";
	case EDESTADDRREQ: return "EDESTADDRREQ";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	case ECONNRESET: return "ECONNRESET";
	case ENOTDIR: return "ENOTDIR";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOSPC: return "ENOSPC";
	case EFBIG: return "EFBIG";
	case ENODEV: return "ENODEV";
	case ENOTTY: return "ENOTTY";
	case EISDIR: return "EISDIR";
	case ENXIO: return "ENXIO";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENETUNREACH: return "ENETUNREACH";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENOTEMPTY: return "ENOTEMPTY";
	case EXDEV: return "EXDEV";
	case ECANCELED: return "ECANCELED";
	case EOVERFLOW: return "EOVERFLOW";
	case E2BIG: return "E2BIG";
	case ERANGE: return "ERANGE";
	case ENFILE: return "ENFILE";
	case ENOBUFS: return "ENOBUFS";
	case ETOOMANYREFS: return "ETOOMANYREFS";
	default: break;
	}
	const char *n = errname(e);
	if (strcmp(n, "E?"))
		return n;
	next = (next + 1) % 4;
	snprintf(other[next], sizeof other[next], "E%d", e);
	return other[next];
}

/* "R" for a result R >= 0, else "-1 ENAME" from errno; 8 rotating buffers so one say() may use several. */
static __attribute__((unused)) const char *rs(long r)
{
	static char b[8][32];
	static int next;
	int e = errno;
	next = (next + 1) % 8;
	if (r < 0)
		snprintf(b[next], sizeof b[next], "-1 %s", ename(e));
	else
		snprintf(b[next], sizeof b[next], "%ld", r);
	errno = e;
	return b[next];
}

/* Is task id (a pid, or a thread's tid: /proc/TID exists unlisted) asleep, as its /proc/ID/stat says? */
static __attribute__((unused)) bool asleep(int id)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", id);
	int fd = open(path, O_RDONLY);
	long n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] == 'S';
}

/* The name of a mode and its function, for the guests' dispatch tables. */
struct mode {
	const char *name;
	int (*fn)(void);
};

/* Run the mode argv[1] names; usage (exit 2) for an unknown one. */
static __attribute__((unused)) int run_mode(const char *prog, const struct mode *m, size_t n, int argc,
					    char **argv)
{
	for (size_t i = 0; argc > 1 && i < n; i++)
		if (!strcmp(argv[1], m[i].name))
			return m[i].fn();
	say("usage: %s MODE (", prog);
	for (size_t i = 0; i < n; i++)
		say("%s%s", i ? "|" : "", m[i].name);
	say(")\n");
	return 2;
}

#endif
