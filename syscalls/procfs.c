// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal /proc for the guest. The host's /proc would show the sentry and
 * every host process, so the guest never reaches it: the files real programs
 * read are generated from the sentry's own state (/proc/PID/{maps,stat,
 * status,cmdline}) or, for machine-wide facts, copied from the host
 * (meminfo, cpuinfo, stat, uptime, loadavg, version). Everything else under
 * /proc is ENOENT. Links: /proc/self, /proc/PID/{exe,cwd,root,fd/N}.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "pvx/kernel.h"
#include "pvx/path.h"
#include "syscalls/procfs.h"

static const char *const host_files[] = { "meminfo", "cpuinfo", "stat", "uptime", "loadavg", "version",
					   "sys/kernel/osrelease", "sys/kernel/ostype", "sys/kernel/version" };

/* "/self/x" or "/PID/x" -> the task and the rest ("x"); NULL when no such guest task. */
static struct task *proc_task(struct task *t, const char *rel, const char **rest)
{
	char *end;
	long pid;

	if (!strncmp(rel, "/self", 5) && (rel[5] == '/' || !rel[5])) {
		*rest = rel + 5;
		return t;
	}
	if (rel[0] != '/')
		return NULL;
	pid = strtol(rel + 1, &end, 10);
	if (end == rel + 1 || (*end != '/' && *end))
		return NULL;
	*rest = end;
	struct task *p = task_find((int)pid);
	return p && p->state != TASK_ZOMBIE ? p : NULL;
}

/* A read-only fd holding text: a sealed memfd reopened O_RDONLY. */
static long text_fd(const char *text, size_t len)
{
	char path[64];
	int fd = memfd_create("pvx-proc", MFD_CLOEXEC);
	long r;

	if (fd < 0)
		return neg_errno();
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, O_RDONLY | O_CLOEXEC);
	r = r < 0 ? neg_errno() : r;
	close(fd);
	return r;
}

/* The thread's name: the program's file name at exec, or prctl(PR_SET_NAME)'s. */
static const char *comm(const struct task *p)
{
	return p->comm[0] ? p->comm : "?";
}

/* /proc/PID/maps: one line per VMA, as show_map_vma() prints them. */
static long gen_maps(struct task *p, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	vma_for_each(v, &p->mm->vmas) {
		char name[PVX_PATH_MAX] = "";
		if (v->file && !(v->flags & MAP_ANONYMOUS) && path_of_fd(v->file->fd, name, sizeof(name)) < 0)
			name[0] = 0;
		if (v->start >= p->mm->brk_start && v->end <= PAGE_ALIGN_UP(p->mm->brk_cur) && !v->file)
			strcpy(name, "[heap]");
		if (v->end == PVX_STACK_TOP)
			strcpy(name, "[stack]");
		fprintf(f, "%08lx-%08lx %c%c%c%c %08lx 00:00 0%s%s\n", v->start, v->end, v->prot & PROT_READ ? 'r' : '-',
			v->prot & PROT_WRITE ? 'w' : '-', v->prot & PROT_EXEC ? 'x' : '-',
			(v->flags & MAP_TYPE) == MAP_PRIVATE ? 'p' : 's', v->file ? v->off : 0,
			name[0] ? "                          " : "", name);
	}
	return fclose(f) ? -ENOMEM : 0;
}

static long gen_file(struct task *p, const char *what, char **out, size_t *len)
{
	FILE *f;

	if (!strcmp(what, "/maps"))
		return gen_maps(p, out, len);
	if (!strcmp(what, "/cmdline")) {
		*len = p->proc->cmdline_len;
		*out = malloc(*len + 1);
		if (*out && *len)
			memcpy(*out, p->proc->cmdline, *len);
		return *out ? 0 : -ENOMEM;
	}
	if (strcmp(what, "/stat") && strcmp(what, "/status"))
		return -ENOENT;
	if (!(f = open_memstream(out, len)))
		return -ENOMEM;
	if (!strcmp(what, "/stat"))	/* proc_pid_stat(5): the first fields; the rest 0 */
		fprintf(f, "%d (%.15s) R %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
			   "0 0 0 0 0 0 0 0 0 0 0\n", p->pid, comm(p), p->proc->ppid, p->proc->pgid, p->proc->sid);
	else
		fprintf(f, "Name:\t%.15s\nState:\tR (running)\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nUid:\t%u\t%u\t%u\t%u\n"
			   "Gid:\t%u\t%u\t%u\t%u\nThreads:\t%d\nSigPnd:\t%016lx\nShdPnd:\t%016lx\nSigBlk:\t%016lx\n",
			comm(p), p->pid, p->tid, p->proc->ppid, sandbox.uid, sandbox.uid, sandbox.uid, sandbox.uid,
			sandbox.gid, sandbox.gid, sandbox.gid, sandbox.gid, MAX(p->proc->nr_threads, 1), p->sigpending,
			p->proc->sigpending, p->sigmask);
	return fclose(f) ? -ENOMEM : 0;
}

/* Where directory listings are staged: one private dir per sentry, gone at exit. */
static char stage[64];

static int rm_entry(const char *path, const struct stat *st __unused, int flag __unused, struct FTW *ftw __unused)
{
	return remove(path);
}

static void stage_cleanup(void)
{
	nftw(stage, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * A directory of /proc (/proc, /proc/PID, /proc/PID/fd): a fresh staging
 * directory holding one empty file per name, so getdents lists them; every
 * lookup in it comes back here by path, never through this directory. Its
 * host path ends in the guest path it stands for (stage/SEQ/proc/5/fd), so
 * that path_of_fd can name it: a cwd or dirfd there works like Linux's.
 */
static long dir_fd(const char *guest_dir, const char *const names[], size_t n)
{
	static unsigned seq;
	char dir[PVX_PATH_MAX + 96];

	if (!stage[0]) {
		snprintf(stage, sizeof(stage), "/tmp/pvx-proc-%d", getpid());
		if (mkdir(stage, 0700) < 0 && errno != EEXIST)
			return neg_errno();
		atexit(stage_cleanup);
	}
	int len = snprintf(dir, sizeof(dir), "%s/%u", stage, seq++);
	if (mkdir(dir, 0755) < 0)
		return neg_errno();
	for (const char *c = guest_dir; *c;) {	/* one level per component: /proc, /proc/5, ... */
		const char *next = strchr(c + 1, '/');
		size_t clen = next ? (size_t)(next - c) : strlen(c);
		len += snprintf(dir + len, sizeof(dir) - (size_t)len, "%.*s", (int)clen, c);
		if ((size_t)len >= sizeof(dir))
			return -ENAMETOOLONG;
		if (mkdir(dir, 0755) < 0)
			return neg_errno();
		c += clen;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return neg_errno();
	for (size_t i = 0; i < n; i++) {
		int e = openat(fd, names[i], O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
		if (e >= 0)
			close(e);
	}
	fchmod(fd, 0555);
	return fd;
}

long procfs_dir_path(const char *host, char *buf, size_t size)
{
	size_t n = strlen(stage);
	char *end;

	if (!n || strncmp(host, stage, n) || host[n] != '/')
		return -EXDEV;
	strtoul(host + n + 1, &end, 10);	/* the sequence number */
	if (strncmp(end, "/proc", 5))
		return -EXDEV;
	if (strlen(end) >= size)
		return -ERANGE;
	strcpy(buf, end);
	return (long)strlen(end);
}

static long list_root(struct task *t)
{
	const char *names[PVX_MAX_TASKS + 16];
	char pids[PVX_MAX_TASKS][12];
	size_t n = 0;

	names[n++] = "self";
	names[n++] = "sys";
	for (size_t i = 0; i < ARRAY_SIZE(host_files); i++)
		if (!strchr(host_files[i], '/'))
			names[n++] = host_files[i];
	for (struct task *p = task_next(NULL); p; p = task_next(p)) {
		if (p->state == TASK_ZOMBIE || n >= ARRAY_SIZE(names) || !p->proc || p->proc->leader != p)
			continue;	/* processes only: threads are not listed, as on Linux */
		snprintf(pids[p->pid - 1], sizeof(pids[0]), "%d", p->pid);
		names[n++] = pids[p->pid - 1];
	}
	(void)t;
	return dir_fd("/proc", names, n);
}

static long list_fds(struct task *t, struct task *p)
{
	static char nums[PVX_NR_OPEN][8];
	const char *names[PVX_NR_OPEN];
	size_t n = 0;

	bool next_free = p == t;	/* the fd this listing is about to get shows too, as on Linux */

	for (int fd = 0; fd < PVX_NR_OPEN; fd++) {
		if (!p->files || (!p->files->fds[fd].file && !next_free))
			continue;
		if (!p->files->fds[fd].file)
			next_free = false;
		snprintf(nums[fd], sizeof(nums[0]), "%d", fd);
		names[n++] = nums[fd];
	}
	char dir[32];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", p->pid);
	return dir_fd(dir, names, n);
}

static const char *const pid_entries[] = { "cmdline", "cwd", "exe", "fd", "maps", "root", "stat", "status" };

/* "." and ".." inside /proc, lexically: its only links are self and the fd links. */
static long normalize(const char *rel, char *out, size_t size)
{
	char tmp[PVX_PATH_MAX], *save, *c;
	size_t len = 0;

	snprintf(tmp, sizeof(tmp), "%s", rel);
	out[0] = 0;
	for (c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			char *slash = strrchr(out, '/');
			if (slash)
				*slash = 0;
			len = strlen(out);
			continue;
		}
		if (len + strlen(c) + 2 > size)
			return -ENAMETOOLONG;
		len += (size_t)sprintf(out + len, "/%s", c);
	}
	return 0;
}

/*
 * Opening /proc/PID/fd/N opens that file anew, as Linux does. Files and
 * directories the guest holds read-only go through the guest path (the
 * read-only policy holds); the rest (pipes, terminals, files the guest may
 * write anyway) are reopened through the sentry's own fd.
 */
static long open_fd_link(struct task *t, struct task *p, const char *num, int flags)
{
	char *end, path[PVX_PATH_MAX];
	long fd = strtol(num, &end, 10);
	struct file *f = *end || end == num ? NULL : fd_lookup(p->files, (int)fd);
	struct stat st;

	if (!f)
		return -ENOENT;
	if (fstat(f->host_fd, &st) < 0)
		return neg_errno();
	/* A file the guest holds for writing it may reopen as it is; others obey the policy. */
	if ((S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) && (f->flags & O_ACCMODE) == O_RDONLY) {
		long r = path_of_fd(f->host_fd, path, sizeof(path));
		return r < 0 ? r : path_open(t, AT_FDCWD, path, flags, 0);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->host_fd);
	long r = open(path, (flags & ~(O_CREAT | O_EXCL | O_DIRECTORY)) | O_CLOEXEC | O_NOCTTY);
	return r < 0 ? neg_errno() : r;
}

long procfs_open(struct task *t, const char *orig, int flags)
{
	const char *rest;
	char *text = NULL;
	size_t len = 0;
	char link[PVX_PATH_MAX], rel[PVX_PATH_MAX];
	long r = normalize(orig, rel, sizeof(rel));
	if (r < 0)
		return r;
	struct task *p = proc_task(t, rel, &rest);

	/* The links first: they open what they name, with the caller's flags. */
	if (p && !strncmp(rest, "/fd/", 4))
		return open_fd_link(t, p, rest + 4, flags);
	if (p && (!strcmp(rest, "/exe") || !strcmp(rest, "/cwd") || !strcmp(rest, "/root"))) {
		long n = procfs_readlink(t, rel, link, sizeof(link));
		if (n < 0)
			return n;
		link[n] = 0;
		return path_open(t, AT_FDCWD, link, flags, 0);
	}
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return -EACCES;
	if (!rel[0])
		return list_root(t);
	if (!strcmp(rel, "/sys"))
		return dir_fd("/proc/sys", (const char *const[]){ "kernel" }, 1);
	if (!strcmp(rel, "/sys/kernel"))
		return dir_fd("/proc/sys/kernel", (const char *const[]){ "osrelease", "ostype", "version" }, 3);
	for (size_t i = 0; i < ARRAY_SIZE(host_files); i++) {
		if (rel[0] == '/' && !strcmp(rel + 1, host_files[i])) {
			snprintf(link, sizeof(link), "/proc/%s", host_files[i]);
			long fd = open(link, O_RDONLY | O_CLOEXEC);
			return fd < 0 ? neg_errno() : fd;
		}
	}
	if (!p)
		return -ENOENT;
	if (!rest[0]) {
		snprintf(link, sizeof(link), "/proc/%d", p->pid);
		return dir_fd(link, pid_entries, ARRAY_SIZE(pid_entries));
	}
	if (!strcmp(rest, "/fd"))
		return list_fds(t, p);
	r = gen_file(p, rest, &text, &len);
	if (!r)
		r = text_fd(text ? text : "", len);
	free(text);
	return r;
}

long procfs_readlink(struct task *t, const char *orig, char *buf, size_t size)
{
	const char *rest;
	char host[64], rel[PVX_PATH_MAX];
	long n = normalize(orig, rel, sizeof(rel));
	if (n < 0)
		return n;
	struct task *p = proc_task(t, rel, &rest);

	if (!p)
		return -ENOENT;
	if (!*rest && !strncmp(rel, "/self", 5))
		return snprintf(buf, size, "%d", t->pid);
	if (!strcmp(rest, "/exe"))
		return p->proc->exe ? snprintf(buf, size, "%s", p->proc->exe) : -ENOENT;
	if (!strcmp(rest, "/root"))
		return snprintf(buf, size, "/");
	if (!strcmp(rest, "/cwd"))
		return path_of_fd(p->proc->cwd_fd, buf, size);
	if (!strncmp(rest, "/fd/", 4)) {
		char *end;
		long fd = strtol(rest + 4, &end, 10);
		struct file *f = *end || end == rest + 4 ? NULL : fd_lookup(p->files, (int)fd);
		if (!f)
			return -ENOENT;
		n = path_of_fd(f->host_fd, buf, size);
		if (n != -ENOENT)
			return n;
		/* Not a path (pipe:[ino], anon_inode:...): the host's words are fine. */
		snprintf(host, sizeof(host), "/proc/self/fd/%d", f->host_fd);
		n = readlink(host, buf, size - 1);
		return n < 0 ? neg_errno() : n;
	}
	return -EINVAL;	/* not a link */
}
