/* Helpers of the sec_block_* guests: the state of a process as /proc shows it. */
#ifndef SEC_BLOCK_H
#define SEC_BLOCK_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The state letter of /proc/PID/stat (after the last ')' of the comm), or '?' */
static __attribute__((unused)) char stat_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* The State: line of /proc/PID/status without "State:\t", or "?" */
static __attribute__((unused)) const char *status_state(pid_t pid)
{
	static char line[64];
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "?";
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return "?";
	buf[n] = 0;
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

/* Poll until pid's state is want (at most 5 s): the state last seen. */
static __attribute__((unused)) char wait_state(pid_t pid, char want)
{
	char s = '?';
	for (int i = 0; i < 500 && (s = stat_state(pid)) != want; i++)
		msleep(10);
	return s;
}

#endif
