// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/ns (fs/proc/namespaces.c): one magic link per namespace type,
 * "TYPE:[INODE]", that opens the namespace file (sentry/fs/nsfs.c). Every
 * guest process is in the sandbox's one set of namespaces, so each link
 * reads the same in every process. An lstat or O_PATH|O_NOFOLLOW open gives
 * the link itself (lrwxrwxrwx), as for the other /proc links.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "pvx/kernel.h"
#include "pvx/nsfs.h"
#include "pvx/path.h"
#include "sentry/kernel/procfs.h"

/* Is rest (after "/proc/PID") the ns directory or in it? */
bool procfs_ns_rest(const char *rest)
{
	return !strncmp(rest, "/ns", 3) && (!rest[3] || rest[3] == '/');
}

static unsigned char ns_type(const char *name)
{
	(void)name;
	return DT_LNK;
}

/* See sentry/kernel/procfs.h. */
long procfs_ns_open(struct task *p, const char *rest, int flags, const struct file_ops **kind)
{
	const char *name = rest + 3;
	char guest[64], target[64];

	if (!*name) {
		const char *names[16];
		size_t n = 0;
		if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | PVX_O_TMPFILE_BIT)))
			return -EACCES;
		for (const char *e; n < ARRAY_SIZE(names) && (e = nsfs_entry(n)); n++)
			names[n] = e;
		snprintf(guest, sizeof(guest), "/proc/%d/ns", p->pid);
		return procfs_dir_fd_typed(guest, names, n, ns_type);
	}
	name++;
	if (strchr(name, '/'))	/* a name below a link to a file that is no directory */
		return nsfs_link(strndupa(name, (size_t)(strchr(name, '/') - name)), target, sizeof(target)) < 0 ?
			       -ENOENT : -ENOTDIR;
	long n = nsfs_link(name, target, sizeof(target));
	if (n < 0)
		return n;
	if ((flags & (O_PATH | O_NOFOLLOW)) == (O_PATH | O_NOFOLLOW)) {
		snprintf(guest, sizeof(guest), "/proc/%d/ns/%s", p->pid, name);
		return procfs_link_fd(guest, target);
	}
	if (flags & O_NOFOLLOW)
		return -ELOOP;	/* the link itself, as on Linux */
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return -EEXIST;
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	/* the nsfs inode is S_IMMUTABLE: inode_permission's MAY_WRITE (O_TRUNC asks it too) is EPERM for anyone */
	if (!(flags & O_PATH) && ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | PVX_O_TMPFILE_BIT))))
		return -EPERM;
	*kind = &nsfs_file_ops;
	return nsfs_open(name);
}

/* See sentry/kernel/procfs.h. */
long procfs_ns_readlink(const char *rest, char *buf, size_t size)
{
	if (strncmp(rest, "/ns/", 4) || strchr(rest + 4, '/'))
		return -EINVAL;
	return nsfs_link(rest + 4, buf, size);
}

/* See pvx/path.h (fs_kernel_ops.ns_pid): find_task_by_vpid, then task_pid_vnr or task_tgid_vnr. */
long procfs_ns_pid(int nr, bool tgid)
{
	struct task *p = nr > 0 ? task_find(nr) : NULL;

	if (!p)
		return -ESRCH;
	return tgid ? p->pid : p->tid;
}
