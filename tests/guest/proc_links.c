/*
 * proc_links: /proc's links are symlinks to lstat, getdents (DT_LNK) and
 * O_PATH|O_NOFOLLOW, and are followed by stat, open and a trailing slash:
 * /proc/self, thread-self, mounts, PID/{exe,cwd,root,fd/N}, a thread's.
 * Prints only kinds and agreements, the same natively and in the sandbox.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "guest.h"

static const char *kind(mode_t m)
{
	return S_ISLNK(m) ? "link" : S_ISDIR(m) ? "dir" : S_ISREG(m) ? "file" : S_ISCHR(m) ? "chr" : "other";
}

static void one_as(const char *path, const char *label)
{
	struct stat l, s, f;
	char by_path[4096], by_fd[4096];

	int lr = lstat(path, &l), sr = stat(path, &s);
	ssize_t n = readlink(path, by_path, sizeof(by_path) - 1);
	int fd = open(path, O_PATH | O_NOFOLLOW);
	ssize_t m = fd < 0 ? -1 : readlinkat(fd, "", by_fd, sizeof(by_fd) - 1);
	int fr = fd < 0 ? -1 : fstat(fd, &f);
	if (n >= 0)
		by_path[n] = 0;
	if (m >= 0)
		by_fd[m] = 0;
	say("%s: lstat %s, stat %s, O_PATH|O_NOFOLLOW fstat %s, readlinkat(fd, \"\") %s\n", label,
	    lr ? errname(errno) : kind(l.st_mode), sr ? errname(errno) : kind(s.st_mode),
	    fr ? "failed" : kind(f.st_mode), m < 0 ? "failed" : n >= 0 && !strcmp(by_fd, by_path) ? "= readlink" : "differs");
	if (fd >= 0)
		close(fd);
}

static void one(const char *path)
{
	one_as(path, path);
}

/* d_type of each of names in dir, in the order of names (readdir's order is the file system's). */
static void types(const char *dir, const char *const names[])
{
	for (int i = 0; names[i]; i++) {
		DIR *d = opendir(dir);
		struct dirent *e;
		if (!d) {
			say("%s: %s\n", dir, errname(errno));
			return;
		}
		while ((e = readdir(d)) && strcmp(e->d_name, names[i]))
			;
		say("%s/%s: d_type %s\n", dir, isdigit((unsigned char)names[i][0]) ? "N" : names[i], !e ? "missing" : e->d_type == DT_LNK ? "DT_LNK" :
		    e->d_type == DT_DIR ? "DT_DIR" : e->d_type == DT_REG ? "DT_REG" : "other");
		closedir(d);
	}
}

int main(void)
{
	char p[64];
	int file = open("/proc/self/exe", O_RDONLY);	/* some regular file at fd `file` */

	one("/proc/self");
	one("/proc/self/");
	one("/proc/thread-self");
	one("/proc/mounts");
	one("/proc/self/exe");
	one("/proc/self/cwd");
	one("/proc/self/root");
	snprintf(p, sizeof(p), "/proc/self/fd/%d", file);
	one(p);
	snprintf(p, sizeof(p), "/proc/self/task/%ld/exe", (long)syscall(SYS_gettid));
	one_as(p, "/proc/self/task/TID/exe");
	one("/proc/self/stat");
	one("/proc/self/fd/9999");
	char buf[64];
	int dir = open("/proc/self", O_PATH | O_DIRECTORY);
	say("readlinkat(a directory's fd, \"\"): %s\n", readlinkat(dir, "", buf, sizeof(buf)) < 0 ? errname(errno) : "ok");
	say("readlinkat(a bad fd, \"\"): %s\n", readlinkat(999, "", buf, sizeof(buf)) < 0 ? errname(errno) : "ok");
	snprintf(p, sizeof(p), "%d", getpid());
	types("/proc", (const char *const[]){ "self", "thread-self", "mounts", "cpuinfo", "sys", p, NULL });
	types("/proc/self", (const char *const[]){ "exe", "cwd", "root", "fd", "fdinfo", "task", "stat", NULL });
	types("/proc/sys", (const char *const[]){ "kernel", NULL });
	snprintf(p, sizeof(p), "%d", file);
	types("/proc/self/fd", (const char *const[]){ p, NULL });
	return 0;
}
