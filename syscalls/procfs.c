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

static const char *comm(const struct task *p)
{
	const char *slash = p->exe ? strrchr(p->exe, '/') : NULL;

	return slash ? slash + 1 : p->exe ? p->exe : "?";
}

/* /proc/PID/maps: one line per VMA, as show_map_vma() prints them. */
static long gen_maps(struct task *p, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < p->mm.vmas.n; i++) {
		const struct vma *v = &p->mm.vmas.v[i];
		char name[PVX_PATH_MAX] = "";
		if (v->file && !(v->flags & MAP_ANONYMOUS) && path_of_fd(v->file->fd, name, sizeof(name)) < 0)
			name[0] = 0;
		if (v->start >= p->mm.brk_start && v->end <= PAGE_ALIGN_UP(p->mm.brk_cur) && !v->file)
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
		*len = p->cmdline_len;
		*out = malloc(*len + 1);
		if (*out && *len)
			memcpy(*out, p->cmdline, *len);
		return *out ? 0 : -ENOMEM;
	}
	if (strcmp(what, "/stat") && strcmp(what, "/status"))
		return -ENOENT;
	if (!(f = open_memstream(out, len)))
		return -ENOMEM;
	if (!strcmp(what, "/stat"))	/* proc_pid_stat(5): the first fields; the rest 0 */
		fprintf(f, "%d (%.15s) R %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
			   "0 0 0 0 0 0 0 0 0 0 0\n", p->pid, comm(p), p->ppid, p->pgid, p->sid);
	else
		fprintf(f, "Name:\t%.15s\nState:\tR (running)\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nUid:\t%u\t%u\t%u\t%u\n"
			   "Gid:\t%u\t%u\t%u\t%u\nThreads:\t1\nSigPnd:\t%016lx\nSigBlk:\t%016lx\n",
			comm(p), p->pid, p->pid, p->ppid, sandbox.uid, sandbox.uid, sandbox.uid, sandbox.uid,
			sandbox.gid, sandbox.gid, sandbox.gid, sandbox.gid, p->sigpending, p->sigmask);
	return fclose(f) ? -ENOMEM : 0;
}

/*
 * The directories (/proc, /proc/PID): stat works, listing them is empty for
 * now: a private directory, removed as soon as it was opened.
 */
static long dir_fd(void)
{
	static int empty = -1;

	if (empty < 0) {
		char tmpl[] = "/tmp/pvx-proc-XXXXXX";
		if (!mkdtemp(tmpl))
			return neg_errno();
		chmod(tmpl, 0555);
		empty = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rmdir(tmpl);
		if (empty < 0)
			return neg_errno();
	}
	long fd = fcntl(empty, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? neg_errno() : fd;
}

long procfs_open(struct task *t, const char *rel, int flags)
{
	const char *rest;
	char *text = NULL;
	size_t len = 0;
	char link[PVX_PATH_MAX];

	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return -EACCES;
	if (!rel[0] || !strcmp(rel, "/"))
		return dir_fd();
	for (size_t i = 0; i < ARRAY_SIZE(host_files); i++) {
		if (rel[0] == '/' && !strcmp(rel + 1, host_files[i])) {
			snprintf(link, sizeof(link), "/proc/%s", host_files[i]);
			long fd = open(link, O_RDONLY | O_CLOEXEC);
			return fd < 0 ? neg_errno() : fd;
		}
	}
	struct task *p = proc_task(t, rel, &rest);
	if (!p)
		return -ENOENT;
	if (!rest[0] || !strcmp(rest, "/"))
		return dir_fd();
	/* The links resolve to what they name (open follows them). */
	if (!strcmp(rest, "/exe") || !strcmp(rest, "/cwd") || !strcmp(rest, "/root") || !strncmp(rest, "/fd/", 4)) {
		long n = procfs_readlink(t, rel, link, sizeof(link));
		if (n < 0)
			return n;
		link[n] = 0;
		if (link[0] != '/')
			return -ENOENT;	/* pipe:[...] and friends: not reopened this way */
		return path_open(t, AT_FDCWD, link, flags, 0);
	}
	long r = gen_file(p, rest, &text, &len);
	if (!r)
		r = text_fd(text ? text : "", len);
	free(text);
	return r;
}

long procfs_readlink(struct task *t, const char *rel, char *buf, size_t size)
{
	const char *rest;
	struct task *p = proc_task(t, rel, &rest);
	char host[64];
	long n;

	if (!p)
		return -ENOENT;
	if (!*rest && !strncmp(rel, "/self", 5))
		return snprintf(buf, size, "%d", t->pid);
	if (!strcmp(rest, "/exe"))
		return p->exe ? snprintf(buf, size, "%s", p->exe) : -ENOENT;
	if (!strcmp(rest, "/root"))
		return snprintf(buf, size, "/");
	if (!strcmp(rest, "/cwd"))
		return path_of_fd(p->cwd_fd, buf, size);
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
