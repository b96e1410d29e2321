/* Helpers of the sec_block_* guests: the state of a process as /proc shows it. */
#ifndef SEC_BLOCK_H
#define SEC_BLOCK_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* /proc/PID/WHAT read into buf (NUL-terminated) in one read; false if it cannot be read. */
static bool read_proc(pid_t pid, const char *what, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

/* The state letter of /proc/PID/stat (after the last ')' of the comm), or '?' */
static __attribute__((unused)) char stat_state(pid_t pid)
{
	char buf[512];
	if (!read_proc(pid, "stat", buf, sizeof(buf)))
		return '?';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* The State: line of /proc/PID/status without "State:\t", or "?" */
static __attribute__((unused)) const char *status_state(pid_t pid)
{
	static char line[64];
	char buf[2048];
	if (!read_proc(pid, "status", buf, sizeof(buf)))
		return "?";
	char *p = strstr(buf, "State:\t");
	if (!p)
		return "?";
	p += 7;
	size_t len = strcspn(p, "\n");
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	memcpy(line, p, len);
	line[len] = 0;
	return line;
}

static __attribute__((unused)) void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* Poll until pid's state is want (at most 20 s: a fork and a blocking call under QEMU's software CPU, on a
 * loaded host, can take seconds): the state last seen. */
static __attribute__((unused)) char wait_state(pid_t pid, char want)
{
	char s = '?';
	for (int i = 0; i < 2000 && (s = stat_state(pid)) != want; i++)
		msleep(10);
	return s;
}

#endif
