// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal /proc for the guest. The host's /proc would show the sentry and
 * every host process, so the guest never reaches it: the files real programs
 * read are generated from the sentry's own state (/proc/PID/{maps,stat,
 * status,cmdline}) or, for machine-wide facts, copied from the host
 * (meminfo, cpuinfo, stat, uptime, loadavg, version, filesystems). Everything else under
 * /proc is ENOENT. Links: /proc/self, /proc/PID/{exe,cwd,root,fd/N}.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "pvx/ipc.h"
#include "pvx/keys.h"
#include "pvx/hostcred.h"
#include "pvx/kernel.h"
#include "pvx/events.h"
#include "pvx/nsfs.h"
#include "pvx/path.h"
#include "pvx/sigqueue.h"
#include "pvx/policy.h"
#include "pvx/rusage.h"
#include "sentry/kernel/procfs.h"

static const char *const host_files[] = { "meminfo", "cpuinfo", "stat", "uptime", "loadavg", "version", "filesystems" };

/*
 * A /proc name that is a number (a pid, an fd): decimal digits only, no
 * sign, no leading zero, at most max, as the kernel's name_to_int() wants.
 * Returns it and sets *end after it, or -1.
 */
static long proc_number(const char *s, const char **end, long max)
{
	long n = 0;
	const char *c = s;

	if (*c == '0' && c[1] >= '0' && c[1] <= '9')
		return -1;
	for (; *c >= '0' && *c <= '9'; c++) {
		n = n * 10 + (*c - '0');
		if (n > max)
			return -1;
	}
	*end = c;
	return c == s ? -1 : n;
}

/* "/self/x" or "/PID/x" -> the task and the rest ("x"); NULL when no such guest task. */
static struct task *proc_task(struct task *t, const char *rel, const char **rest)
{
	const char *end;
	long pid;

	if (!strncmp(rel, "/self", 5) && (rel[5] == '/' || !rel[5])) {
		*rest = rel + 5;
		return t;
	}
	if (rel[0] != '/')
		return NULL;
	pid = proc_number(rel + 1, &end, PVX_MAX_TASKS);
	if (pid < 0 || (*end != '/' && *end))
		return NULL;
	*rest = end;
	struct task *p = task_find((int)pid);
	/* A zombie keeps its directory, stat and status (state Z); the rest needs the mm or files it lost. */
	bool zombie_ok = !*end || !strcmp(end, "/stat") || !strcmp(end, "/status");
	return p && (p->state != TASK_ZOMBIE || zombie_ok) ? p : NULL;
}

/* See sentry/kernel/procfs.h: a memfd reopened O_RDONLY. */
long procfs_text_fd(const char *text, size_t len)
{
	char path[64];
	int fd = memfd_create("pvx-proc", MFD_CLOEXEC);
	long r;

	if (fd < 0)
		return neg_errno();
	if (write(fd, text, len) != (ssize_t)len || fchmod(fd, 0444) < 0) {	/* proc files are r--r--r-- */
		close(fd);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, O_RDONLY | O_CLOEXEC);
	r = r < 0 ? neg_errno() : r;
	close(fd);
	return r;
}

/*
 * /proc/loadavg is the host's but for its last field, "the PID of the
 * process that was most recently created on the system": a pid of the
 * host. The sandbox's own highest live pid stands in for it, as a pid
 * namespace shows its own.
 */
static long gen_loadavg(void)
{
	char buf[256], out[300];
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC), last = 1;
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	char *sp = strrchr(buf, ' ');
	if (!sp)
		return -EIO;
	*sp = 0;
	for (struct task *p = task_next(NULL); p; p = task_next(p))
		last = MAX(last, p->pid);
	n = snprintf(out, sizeof(out), "%s %d\n", buf, last);
	return procfs_text_fd(out, (size_t)n);
}

/* The thread's name: the program's file name at exec, or prctl(PR_SET_NAME)'s. */
static const char *comm(const struct task *p)
{
	return p->comm[0] ? p->comm : "?";
}

/* One VMA's line of /proc/PID/maps (and each VMA's first line in smaps), as show_map_vma() prints it. */
void procfs_maps_line(FILE *f, const struct task *p, const struct vma *v)
{
	char name[PVX_PATH_MAX] = "";

	if (v->file && !(v->flags & MAP_ANONYMOUS) && path_of_fd(v->file->fd, name, sizeof(name)) < 0)
		name[0] = 0;
	if (v->start >= p->mm->brk_start && v->end <= PAGE_ALIGN_UP(p->mm->brk_cur) && !v->file)
		strcpy(name, "[heap]");
	if (v->end == p->mm->stack_top)
		strcpy(name, "[stack]");
	fprintf(f, "%08lx-%08lx %c%c%c%c %08lx 00:00 0%s", v->start, v->end, v->prot & PROT_READ ? 'r' : '-',
		v->prot & PROT_WRITE ? 'w' : '-', v->prot & PROT_EXEC ? 'x' : '-',
		(v->flags & MAP_TYPE) == MAP_PRIVATE ? 'p' : 's', v->file ? v->off : 0,
		name[0] ? "                          " : "");
	/* seq_file_path(m, file, "\n"): a newline in a file's name is \012, never a line of its own */
	for (const char *c = name; *c; c++)
		*c == '\n' ? (void)fputs("\\012", f) : (void)fputc(*c, f);
	fputc('\n', f);
}

/* /proc/PID/maps: one line per VMA. */
static long gen_maps(struct task *p, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	vma_for_each(v, &p->mm->vmas)
		procfs_maps_line(f, p, v);
	return fclose(f) ? -ENOMEM : 0;
}

/* The file system type of the guest's root, by its statfs magic, as /proc/mounts names it. */
static const char *root_fstype(void)
{
	static const struct { long magic; const char *name; } types[] = {
		{ 0xEF53, "ext4" }, { 0x01021994, "tmpfs" }, { 0x58465342, "xfs" }, { 0x9123683E, "btrfs" },
		{ 0x794c7630, "overlay" }, { 0x01021997, "9p" }, { 0x6969, "nfs" }, { 0x65735546, "fuse" },
		{ 0x2011BAB0, "exfat" }, { 0x4d44, "vfat" }, { 0x73717368, "squashfs" }, { 0xF2F52010, "f2fs" },
	};
	struct statfs sf;

	if (fstatfs(sandbox.rootfd, &sf) == 0)
		for (size_t i = 0; i < ARRAY_SIZE(types); i++)
			if (sf.f_type == types[i].magic)
				return types[i].name;
	return "rootfs";
}

/*
 * /proc/PID/mounts and mountinfo (/proc/mounts): the guest's own table, the
 * root (read-only unless --rw) and its /proc, never the host's mounts.
 */
static long gen_mounts(bool info, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	struct stat st = { 0 };
	const char *ro = sandbox.rw ? "rw" : "ro", *type = root_fstype();

	if (!f)
		return -ENOMEM;
	fstat(sandbox.rootfd, &st);
	if (info)
		fprintf(f, "1 1 %u:%u / / %s,relatime - %s / %s\n2 1 0:1 / /proc rw,nosuid,nodev,noexec,relatime - "
			   "proc proc rw\n", major(st.st_dev), minor(st.st_dev), ro, type, ro);
	else
		fprintf(f, "/ / %s %s,relatime 0 0\nproc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n", type, ro);
	return fclose(f) ? -ENOMEM : 0;
}

/*
 * /proc/PID/environ: the environment strings as they are now in the
 * process's memory, from env_start to env_end, as Linux reads them
 * (access_remote_vm): what the guest unmapped there ends the text.
 */
static long gen_environ(struct task *p, char **out, size_t *len)
{
	uint64_t n = p->mm->env_end > p->mm->env_start ? p->mm->env_end - p->mm->env_start : 0;

	n = MIN(n, 256UL << 10);	/* the loader's own bound on argv+envp */
	*len = 0;
	if (!(*out = malloc(n + 1)))
		return -ENOMEM;
	for (uint64_t at = 0; at < n; at += 4096) {
		size_t chunk = (size_t)MIN(4096, n - at);
		if (copy_from_guest(p->mm, *out + at, p->mm->env_start + at, chunk))
			break;
		*len = at + chunk;
	}
	return 0;
}

/* /proc/PID/limits, in proc_pid_limits()'s layout. */
static long gen_limits(struct task *p, char **out, size_t *len)
{
	static const struct { const char *name, *unit; } l[RLIM_NLIMITS] = {
		[RLIMIT_CPU] = { "Max cpu time", "seconds" }, [RLIMIT_FSIZE] = { "Max file size", "bytes" },
		[RLIMIT_DATA] = { "Max data size", "bytes" }, [RLIMIT_STACK] = { "Max stack size", "bytes" },
		[RLIMIT_CORE] = { "Max core file size", "bytes" }, [RLIMIT_RSS] = { "Max resident set", "bytes" },
		[RLIMIT_NPROC] = { "Max processes", "processes" }, [RLIMIT_NOFILE] = { "Max open files", "files" },
		[RLIMIT_MEMLOCK] = { "Max locked memory", "bytes" }, [RLIMIT_AS] = { "Max address space", "bytes" },
		[RLIMIT_LOCKS] = { "Max file locks", "locks" }, [RLIMIT_SIGPENDING] = { "Max pending signals", "signals" },
		[RLIMIT_MSGQUEUE] = { "Max msgqueue size", "bytes" }, [RLIMIT_NICE] = { "Max nice priority", NULL },
		[RLIMIT_RTPRIO] = { "Max realtime priority", NULL }, [RLIMIT_RTTIME] = { "Max realtime timeout", "us" },
	};
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit", "Units");
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		const struct rlimit *r = &p->proc->rlim[i];
		fprintf(f, "%-25s ", l[i].name);
		if (r->rlim_cur == RLIM_INFINITY)
			fprintf(f, "%-20s ", "unlimited");
		else
			fprintf(f, "%-20lu ", (unsigned long)r->rlim_cur);
		if (r->rlim_max == RLIM_INFINITY)
			fprintf(f, "%-20s ", "unlimited");
		else
			fprintf(f, "%-20lu ", (unsigned long)r->rlim_max);
		if (l[i].unit)
			fprintf(f, "%-10s", l[i].unit);
		fputc('\n', f);
	}
	return fclose(f) ? -ENOMEM : 0;
}

static long gen_file(struct task *p, const char *what, char **out, size_t *len)
{
	FILE *f;

	if (!strcmp(what, "/maps"))
		return gen_maps(p, out, len);
	if (!strcmp(what, "/smaps") || !strcmp(what, "/smaps_rollup"))
		return procfs_smaps(p, what[6] == '_', out, len);	/* sentry/kernel/procfs_smaps.c */
	if (!strcmp(what, "/mounts") || !strcmp(what, "/mountinfo"))
		return gen_mounts(what[6] == 'i', out, len);
	if (!strcmp(what, "/cmdline")) {
		*len = p->proc->cmdline_len;
		*out = malloc(*len + 1);
		if (*out && *len)
			memcpy(*out, p->proc->cmdline, *len);
		return *out ? 0 : -ENOMEM;
	}
	if (!strcmp(what, "/comm"))
		return (*out = NULL, asprintf(out, "%s\n", comm(p)) < 0 ? -ENOMEM : (*len = strlen(*out), 0));
	if (!strcmp(what, "/environ"))
		return gen_environ(p, out, len);
	if (!strcmp(what, "/limits"))
		return gen_limits(p, out, len);
	if (!strcmp(what, "/timerslack_ns"))	/* prctl(PR_SET_TIMERSLACK)'s value (read-only here) */
		return (*out = NULL, asprintf(out, "%lu\n", p->timer_slack_ns) < 0 ? -ENOMEM : (*len = strlen(*out), 0));
	if (strcmp(what, "/stat") && strcmp(what, "/status") && strcmp(what, "/statm"))
		return -ENOENT;
	if (!(f = open_memstream(out, len)))
		return -ENOMEM;
	uint64_t vsize = 0;
	vma_for_each(v, &p->mm->vmas)
		vsize += v->end - v->start;
	if (!strcmp(what, "/statm")) {	/* size resident shared text lib data dt, in pages */
		fprintf(f, "%lu %lu 0 0 0 0 0\n", vsize / PAGE_SIZE, usage_rss_pages(p->proc));
	} else if (!strcmp(what, "/stat")) {	/* proc_pid_stat(5): fields 1-52; the ones pvx has no answer for are 0 */
		struct guest_usage u;
		const struct guest_usage *c = &p->proc->usage_children;
		usage_of_process(p->proc, &u);
		fprintf(f, "%d (%.15s) %c %d %d %d 0 -1 0 %lu %lu %lu %lu %ld %ld %ld %ld %d %d %d 0 %lu %lu %lu "
			   "18446744073709551615 0 0 %lu 0 0 0 0 0 0 0 0 0 17 0 0 %d 0 0 0 0 0 %lu 0 0 0 0 0\n",
			p->pid, comm(p), task_state_name(p)[0], p->proc->ppid, p->proc->pgid, p->proc->sid, u.minflt,
			c->minflt, u.majflt, c->majflt, (long)usage_ticks(u.utime_us), (long)usage_ticks(u.stime_us),
			(long)usage_ticks(c->utime_us), (long)usage_ticks(c->stime_us), 20 + p->proc->nice, p->proc->nice,
			MAX(p->proc->nr_threads, 1), p->proc->start_ticks, vsize, usage_rss_pages(p->proc), p->mm->stack_top,
			p->sched_policy, p->mm->brk_start);
	} else {
		fprintf(f, "Name:\t%.15s\nState:\t%s\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nUid:\t%u\t%u\t%u\t%u\n"
			   "Gid:\t%u\t%u\t%u\t%u\nVmSize:\t%8lu kB\nVmLck:\t%8lu kB\nVmRSS:\t%8lu kB\nThreads:\t%d\nSigQ:\t%lu/%llu\n"
			   "SigPnd:\t%016lx\nShdPnd:\t%016lx\nSigBlk:\t%016lx\n",
			comm(p), task_state_name(p), p->pid, p->tid, p->proc->ppid, sandbox.uid, sandbox.uid, sandbox.uid,
			sandbox.uid,
			sandbox.gid, sandbox.gid, sandbox.gid, sandbox.gid, vsize >> 10, mm_locked_bytes(p->mm) >> 10, usage_rss_pages(p->proc) * (PAGE_SIZE >> 10),
			MAX(p->proc->nr_threads, 1), sigq_queued(),
			(unsigned long long)p->proc->rlim[RLIMIT_SIGPENDING].rlim_cur, p->pending.set, p->proc->pending.set,
			p->sigmask);
	}
	return fclose(f) ? -ENOMEM : 0;
}

/* The links of /proc and /proc/PID. */
static bool root_link(const char *name)
{
	return !strcmp(name, "self") || !strcmp(name, "thread-self") || !strcmp(name, "mounts");
}

static bool pid_link(const char *name)
{
	return !strcmp(name, "cwd") || !strcmp(name, "exe") || !strcmp(name, "root");
}

/* What getdents says each name of /proc, /proc/PID and the others is. */
static unsigned char root_type(const char *name)
{
	return root_link(name) ? DT_LNK : !strcmp(name, "sys") || (*name >= '1' && *name <= '9') ? DT_DIR : DT_REG;
}

static unsigned char pid_type(const char *name)
{
	return pid_link(name) ? DT_LNK : !strcmp(name, "fd") || !strcmp(name, "fdinfo") || !strcmp(name, "task") || !strcmp(name, "ns") ? DT_DIR : DT_REG;
}

static unsigned char link_type(const char *name)
{
	(void)name;
	return DT_LNK;
}

static unsigned char dir_type(const char *name)
{
	(void)name;
	return DT_DIR;
}

static long list_root(struct task *t)
{
	const char *names[PVX_MAX_TASKS + 16];
	char pids[PVX_MAX_TASKS][12];
	size_t n = 0;

	names[n++] = "self";
	names[n++] = "thread-self";
	names[n++] = "sys";
	names[n++] = "mounts";
	names[n++] = "sysvipc";
	names[n++] = "config.gz";
	names[n++] = "keys";
	names[n++] = "key-users";
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
	return procfs_dir_fd_typed("/proc", names, n, root_type);
}

static long list_fds(struct task *t, struct task *p, const char *what)
{
	unsigned size = p->files ? p->files->size : 0;
	cleanup_free char(*nums)[8] = calloc(size + 1, sizeof(*nums));
	cleanup_free const char **names = calloc(size + 1, sizeof(*names));
	size_t n = 0;

	if (!nums || !names)
		return -ENOMEM;
	bool next_free = p == t;	/* the fd this listing is about to get shows too, as on Linux */
	for (unsigned fd = 0; fd <= size && p->files; fd++) {
		bool used = fd < size && p->files->fds[fd].file;
		if (!used && !next_free)
			continue;
		if (!used)
			next_free = false;
		snprintf(nums[n], sizeof(nums[0]), "%u", fd);
		names[n] = nums[n];
		n++;
	}
	char dir[32];
	snprintf(dir, sizeof(dir), "/proc/%d/%s", p->pid, what);
	return procfs_dir_fd_typed(dir, names, n, strcmp(what, "fd") ? NULL : link_type);
}

static const char *const pid_entries[] = { "cmdline", "comm", "cwd", "environ", "exe", "fd", "fdinfo", "limits",
					   "maps", "mountinfo", "mounts", "ns", "root", "stat", "statm", "status", "task",
					   "timerslack_ns", "smaps", "smaps_rollup", "pagemap" };

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * /proc/PID/fdinfo/N (seq_show): pos, flags (the guest's F_GETFL, with
 * O_CLOEXEC from its fd), mnt_id and ino as the host says them of the file,
 * then the kind's own lines where they are the host file's (host_fdinfo).
 */
static long gen_fdinfo(struct task *p, const char *num, char **out, size_t *len)
{
	const char *end;
	long fd = proc_number(num, &end, PVX_NR_OPEN - 1);
	struct file *f = fd < 0 || *end || !p->files ? NULL : fd_lookup(p->files, (int)fd);
	char host[64], buf[8192];
	FILE *o;

	if (!f)
		return -ENOENT;
	snprintf(host, sizeof(host), "/proc/self/fdinfo/%d", f->host_fd);
	int hfd = f->host_fd >= 0 ? open(host, O_RDONLY | O_CLOEXEC) : -1;
	long n = hfd < 0 ? 0 : read(hfd, buf, sizeof(buf) - 1);
	if (hfd >= 0)
		close(hfd);
	buf[n > 0 ? n : 0] = 0;
	long fl = file_getfl(f);
	struct stat nst;
	if (!(o = open_memstream(out, len)))
		return -ENOMEM;
	for (char *save, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (starts(line, "flags:"))
			fprintf(o, "flags:\t0%lo\n", (unsigned long)(fl < 0 ? 0 : fl) |
				(p->files->fds[fd].cloexec ? O_CLOEXEC : 0));
		else if (starts(line, "ino:") && nsfs_type(f) >= 0 && !f->ops->stat(f, &nst))
			fprintf(o, "ino:\t%lu\n", (unsigned long)nst.st_ino);	/* the sandbox's namespace id */
		else if (starts(line, "pos:") || starts(line, "mnt_id:") || starts(line, "ino:") || f->ops->host_fdinfo)
			fprintf(o, "%s\n", line);
	}
	return fclose(o) ? -ENOMEM : 0;
}

/* /proc/PID/task: the threads of p's process that are not zombies. */
static long list_threads(struct task *p)
{
	const char *names[PVX_MAX_TASKS];
	static char tids[PVX_MAX_TASKS][12];
	size_t n = 0;

	for (struct task *q = task_next(NULL); q && n < ARRAY_SIZE(names); q = task_next(q)) {
		if (q->proc != p->proc || q->state == TASK_ZOMBIE)
			continue;
		snprintf(tids[n], sizeof(tids[0]), "%d", q->tid);
		names[n] = tids[n];
		n++;
	}
	char dir[32];
	snprintf(dir, sizeof(dir), "/proc/%d/task", p->pid);
	return procfs_dir_fd_typed(dir, names, n, dir_type);
}

/*
 * /proc/PID/task/TID/... and /proc/thread-self/...: a thread's directory
 * is the task's own, /proc/TID (which Linux has too, unlisted), so rel is
 * rewritten to that before it is looked at; TID must be a thread of PID
 * (ENOENT otherwise). *threads: rel is /proc/PID/task itself.
 */
static long thread_rel(struct task *t, char *rel, size_t size, struct task **threads)
{
	char tmp[PVX_PATH_MAX];
	const char *rest, *end;

	*threads = NULL;
	if (!strncmp(rel, "/thread-self", 12) && (rel[12] == '/' || !rel[12])) {
		snprintf(tmp, sizeof(tmp), "/%d%s", t->tid, rel + 12);
		return snprintf(rel, size, "%s", tmp) >= (int)size ? -ENAMETOOLONG : 0;
	}
	struct task *p = proc_task(t, rel, &rest);
	if (!p || strncmp(rest, "/task", 5) || (rest[5] && rest[5] != '/'))
		return 0;
	if (!rest[5] || !rest[6]) {
		*threads = p;
		return 0;
	}
	long tid = proc_number(rest + 6, &end, PVX_MAX_TASKS);
	struct task *q = tid < 0 || (*end && *end != '/') ? NULL : task_find((int)tid);
	if (!q || q->proc != p->proc)
		return -ENOENT;
	snprintf(tmp, sizeof(tmp), "/%ld%s", tid, end);
	return snprintf(rel, size, "%s", tmp) >= (int)size ? -ENAMETOOLONG : 0;
}

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
 * Opening /proc/PID/fd/N opens that file anew, as Linux does: the very
 * object the guest holds, through the policy (sentry/fs/policy.c) with the
 * guest's flags on that fd, so an O_PATH fd of a device or of a read-only
 * file gives no more than the device allow-list and the read-only root
 * allow. "/proc/PID/fd/N/name" looks name up in directory N. The new
 * file is of the kind of the one it reopens (*kind), as Linux's reopen
 * gives a pipe, a memfd or a /proc file again (a kind with priv state
 * would need that made: such a file is classified by what it is instead).
 */
static long open_fd_link(struct task *t, struct task *p, const char *num, int flags, const struct file_ops **kind)
{
	char path[PVX_PATH_MAX];
	const char *end;
	long fd = proc_number(num, &end, PVX_NR_OPEN - 1);
	struct file *f = fd < 0 || (*end && *end != '/') ? NULL : fd_lookup(p->files, (int)fd);

	if (!f)
		return -ENOENT;
	if (*end) {
		long r = file_object(f, FILE_DIR);
		r = r < 0 ? r : path_of_fd((int)r, path, sizeof(path));
		if (r == -ENOTDIR)
			return r;
		if (r < 0)
			return r == -ERANGE ? -ENAMETOOLONG : -ENOENT;
		if (strlen(path) + strlen(end) >= sizeof(path))
			return -ENAMETOOLONG;
		strcat(path, end);
		return path_open(t, AT_FDCWD, path, flags, 0);
	}
	if ((flags & (O_NOFOLLOW | O_PATH)) == O_NOFOLLOW)
		return -ELOOP;	/* the link itself, as on Linux */
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return -EEXIST;
	long obj = file_object(f, FILE_REOPEN);
	if (obj < 0)
		return obj == FILE_CALL_DONE ? -ENXIO : obj;
	file_get(f);	/* its host fd stays while a FIFO's open waits with the lock dropped */
	long r = policy_reopen(t, (int)obj, flags, 0, f->flags);
	if (r >= 0 && !f->priv)	/* a kind with state of its own makes that in its own open */
		*kind = f->ops;
	file_put(f);
	return r;
}

/*
 * O_PATH|O_NOFOLLOW of a /proc link (lstat, fstatat AT_SYMLINK_NOFOLLOW,
 * readlinkat on the fd): the link itself, named by its guest path with
 * self resolved as Linux's d_path does. -EINVAL: orig is not a link.
 */
static long open_link_itself(struct task *t, const char *orig)
{
	char target[PVX_PATH_MAX], rel[PVX_PATH_MAX], guest[PVX_PATH_MAX + 16];
	const char *rest = "";
	struct task *threads, *p = NULL;

	size_t len = strlen(orig);

	if (len && (orig[len - 1] == '/' || (orig[len - 1] == '.' && (len == 1 || orig[len - 2] == '/'))))
		return -EINVAL;	/* "self/" and "self/.": followed, as a trailing slash makes Linux do */
	if (normalize(orig, rel, sizeof(rel)) < 0)
		return -ENAMETOOLONG;
	if (!rel[0] || strchr(rel + 1, '/') || !root_link(rel + 1)) {
		if (thread_rel(t, rel, sizeof(rel), &threads) < 0 || !(p = proc_task(t, rel, &rest)))
			return -EINVAL;	/* ENOENT and the like come from the ordinary open */
		if (!pid_link(rest + (rest[0] == '/')) && (strncmp(rest, "/fd/", 4) || strchr(rest + 4, '/')))
			return -EINVAL;
	}
	long n = procfs_readlink(t, orig, target, sizeof(target));
	if (n < 0)
		return n;
	if ((size_t)n >= sizeof(target))
		return -ENAMETOOLONG;
	target[n] = 0;
	if (p)
		snprintf(guest, sizeof(guest), "/proc/%d%s", p->pid, rest);
	else
		snprintf(guest, sizeof(guest), "/proc%s", rel);
	return procfs_link_fd(guest, target);
}

/*
 * Open the guest's /proc path orig (after "/proc"); *kind is
 * procfs_file_ops for the text pvx makes, NULL for what is a host object
 * (directories, the host's own files, what a link names).
 */
static long procfs_open_kind(struct task *t, const char *orig, int flags, const struct file_ops **kind)
{
	const char *rest;
	char *text = NULL;
	size_t len = 0;
	char link[PVX_PATH_MAX], rel[PVX_PATH_MAX];
	struct task *threads;
	long r;

	if ((flags & (O_PATH | O_NOFOLLOW)) == (O_PATH | O_NOFOLLOW) && (r = open_link_itself(t, orig)) != -EINVAL)
		return r;
	r = normalize(orig, rel, sizeof(rel));
	if (r < 0 || (r = thread_rel(t, rel, sizeof(rel), &threads)) < 0)
		return r;
	struct task *p = proc_task(t, rel, &rest);

	/* The links first: they open what they name, with the caller's flags. */
	if (p && procfs_ns_rest(rest))
		return procfs_ns_open(p, rest, flags, kind);	/* procfs_ns.c */
	if (p && !strncmp(rest, "/fd/", 4))
		return open_fd_link(t, p, rest + 4, flags, kind);
	if (p && (!strcmp(rest, "/exe") || !strcmp(rest, "/cwd") || !strcmp(rest, "/root"))) {
		long n = procfs_readlink(t, rel, link, sizeof(link));
		if (n < 0)
			return n;
		link[n] = 0;
		if ((flags & (O_NOFOLLOW | O_PATH)) == O_NOFOLLOW)
			return -ELOOP;	/* the link itself, as on Linux */
		return path_open(t, AT_FDCWD, link, flags & ~O_NOFOLLOW, 0);
	}
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | PVX_O_TMPFILE_BIT)))
		return -EACCES;
	if (!rel[0])
		return list_root(t);
	if (!strcmp(rel, "/sysvipc"))
		return procfs_dir_fd("/proc/sysvipc", (const char *const[]){ "msg", "sem", "shm" }, 3);
	if (!strncmp(rel, "/sysvipc/", 9)) {
		r = ipc_proc_text(rel, &text, &len);	/* the IPC namespace's files (sentry/kernel/ipc_proc.c) */
		if (r != -ENOENT) {
			if (!r)
				r = procfs_text_fd(text, len);
			free(text);
			*kind = &procfs_file_ops;
			return r;
		}
	}
	if (!strncmp(rel, "/sys", 4) && (!rel[4] || rel[4] == '/'))
		return procfs_sys_open(rel + 4, kind);
	if (!strcmp(rel, "/config.gz"))
		return procfs_config_open(kind);
	if (!strcmp(rel, "/keys") || !strcmp(rel, "/key-users")) {
		r = keys_proc_text(t, rel, &text, &len);	/* the sandbox's keys (sentry/kernel/keys_proc.c) */
		if (!r)
			r = procfs_text_fd(text, len);
		free(text);
		*kind = &procfs_file_ops;
		return r;
	}
	if (!strcmp(rel, "/loadavg")) {
		*kind = &procfs_file_ops;
		return gen_loadavg();
	}
	if (!strcmp(rel, "/mounts")) {	/* Linux: a symlink to self/mounts */
		r = gen_mounts(false, &text, &len);
		if (!r)
			r = procfs_text_fd(text, len);
		free(text);
		*kind = &procfs_file_ops;
		return r;
	}
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
		return procfs_dir_fd_typed(link, pid_entries, ARRAY_SIZE(pid_entries), pid_type);
	}
	if (!strcmp(rest, "/fd") || !strcmp(rest, "/fdinfo"))
		return list_fds(t, p, rest + 1);
	if (!strncmp(rest, "/fdinfo/", 8)) {
		r = gen_fdinfo(p, rest + 8, &text, &len);
		if (!r)
			r = procfs_text_fd(text, len);
		free(text);
		*kind = &procfs_file_ops;
		return r;
	}
	if (threads)
		return list_threads(threads);
	if (!strcmp(rest, "/pagemap"))	/* made at each read (sentry/kernel/procfs_smaps.c) */
		return procfs_pagemap_open(t, p, kind);
	r = gen_file(p, rest, &text, &len);
	if (!r)
		r = procfs_text_fd(text ? text : "", len);
	free(text);
	*kind = &procfs_file_ops;
	return r;
}

long procfs_open(struct task *t, const char *orig, int flags)
{
	const struct file_ops *kind = NULL;

	return procfs_open_kind(t, orig, flags, &kind);
}

long procfs_readlink(struct task *t, const char *orig, char *buf, size_t size)
{
	const char *rest;
	char host[64], rel[PVX_PATH_MAX];
	struct task *threads;
	bool thread_self = !strcmp(orig, "/thread-self");
	long n = normalize(orig, rel, sizeof(rel));
	if (n < 0 || (n = thread_rel(t, rel, sizeof(rel), &threads)) < 0)
		return n;
	struct task *p = proc_task(t, rel, &rest);

	if (!strcmp(rel, "/mounts"))
		return snprintf(buf, size, "self/mounts");
	if (!p)
		return -ENOENT;
	if (!*rest && !strncmp(rel, "/self", 5))
		return snprintf(buf, size, "%d", t->pid);
	if (thread_self)
		return snprintf(buf, size, "%d/task/%d", t->pid, t->tid);
	if (!strcmp(rest, "/exe"))
		return p->proc->exe ? snprintf(buf, size, "%s", p->proc->exe) : -ENOENT;
	if (!strcmp(rest, "/root"))
		return snprintf(buf, size, "/");
	if (!strcmp(rest, "/cwd"))
		return p->fs ? path_of_fd(p->fs->cwd_fd, buf, size) : -ENOENT;
	if (!strncmp(rest, "/ns/", 4))
		return procfs_ns_readlink(rest, buf, size);
	if (!strncmp(rest, "/fd/", 4)) {
		const char *end;
		long fd = proc_number(rest + 4, &end, PVX_NR_OPEN - 1);
		struct file *f = fd < 0 || *end ? NULL : fd_lookup(p->files, (int)fd);
		if (!f)
			return -ENOENT;
		if ((n = nsfs_fd_name(f, buf, size)) != -EINVAL)
			return n;	/* a namespace file: its d_dname, with the sandbox's inode */
		n = path_of_fd(f->host_fd, buf, size);
		if (n != -ENOENT && n != -EXDEV)
			return n;
		/*
		 * Not a path (pipe:[ino], anon_inode:...), or a file outside the
		 * root that pvx was given (its stdin, /dev/null under --root):
		 * the host's words, as Linux's d_path names a file outside a
		 * chroot from the real root.
		 */
		snprintf(host, sizeof(host), "/proc/self/fd/%d", f->host_fd);
		n = readlink(host, buf, size - 1);
		return n < 0 ? neg_errno() : n;
	}
	return -EINVAL;	/* not a link */
}

/* /proc and the blocking call, for the file side's path resolution and opens. */
const struct fs_kernel_ops kernel_fs_ops = {
	.proc_open = procfs_open,
	.proc_dir_path = procfs_dir_path,
	.block = task_block,
	.block_io = io_block,
	.proc_open_kind = procfs_open_kind,
	.sigio = signal_sigio,
	.ns_pid = procfs_ns_pid,
	.pt_pause_all = pt_pause_all,
};
