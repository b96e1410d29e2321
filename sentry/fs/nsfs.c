// SPDX-License-Identifier: GPL-2.0
/*
 * Namespace files (fs/nsfs.c, fs/proc/namespaces.c): /proc/PID/ns/NAME opens
 * one, setns(2) takes one, and its ioctls (include/uapi/linux/nsfs.h of
 * 6.12) ask about the namespace. The sandbox has one namespace of each type
 * for all its processes, child of none the guest can see: it is to the
 * guest what the initial namespaces are to a process of the host, so the
 * ioctls answer as Linux answers a process about its own namespaces with no
 * capability (the guest holds none). The inode numbers are the sandbox's
 * own, picked once at random in the range Linux gives namespaces made after
 * boot (proc_alloc_inum: 0xF0000000 and up), one per type.
 *
 * The host fd of each file is the sentry's own nsfs file of that type, so
 * st_dev, fstatfs (NSFS_MAGIC) and poll are nsfs's; it also tells the type
 * of a file (by its host inode). pvx never makes an ioctl or setns on it.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "pvx/mm.h"
#include "pvx/nsfs.h"
#include "pvx/path.h"

#define NSIO 0xb7
#define NS_GET_USERNS _IO(NSIO, 0x1)
#define NS_GET_PARENT _IO(NSIO, 0x2)
#define NS_GET_NSTYPE _IO(NSIO, 0x3)
#define NS_GET_OWNER_UID _IO(NSIO, 0x4)
#define NS_GET_MNTNS_ID _IOR(NSIO, 0x5, uint64_t)
#define NS_GET_PID_FROM_PIDNS _IOR(NSIO, 0x6, int)
#define NS_GET_TGID_FROM_PIDNS _IOR(NSIO, 0x7, int)
#define NS_GET_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#define NS_GET_TGID_IN_PIDNS _IOR(NSIO, 0x9, int)
#define NS_MNT_GET_INFO_NR 10
#define NS_MNT_GET_NEXT_NR 11
#define NS_MNT_GET_PREV_NR 12
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* The namespace types, in the order of Linux's ns_entries[] (readdir of /proc/PID/ns). */
static struct ns_type {
	const char *name;	/* the host's /proc/self/ns name and the link's "TYPE:" */
	long clone_flag;
	bool has_parent;	/* NS_GET_PARENT is defined (pid and user); others: EINVAL */
	int host_fd;		/* the sentry's own, -1: the host has none (configured out) */
	ino_t host_ino;
} types[] = {
	{ "net", CLONE_NEWNET, false, -1, 0 },	 { "uts", CLONE_NEWUTS, false, -1, 0 },
	{ "ipc", CLONE_NEWIPC, false, -1, 0 },	 { "pid", CLONE_NEWPID, true, -1, 0 },
	{ "user", CLONE_NEWUSER, true, -1, 0 },	 { "mnt", CLONE_NEWNS, false, -1, 0 },
	{ "cgroup", CLONE_NEWCGROUP, false, -1, 0 }, { "time", CLONE_NEWTIME, false, -1, 0 },
};

/* The entries of /proc/PID/ns: each is a type's (the *_for_children ones the same namespace here). */
static const struct { const char *entry; size_t type; } entries[] = {
	{ "net", 0 }, { "uts", 1 }, { "ipc", 2 }, { "pid", 3 }, { "pid_for_children", 3 }, { "user", 4 },
	{ "mnt", 5 }, { "cgroup", 6 }, { "time", 7 }, { "time_for_children", 7 },
};

static unsigned long ino_base;	/* types[i]'s guest inode is ino_base + i */
static bool ready;

/* Open the sentry's nsfs files once (its /proc/self/ns is always its own to read) and pick the ids. */
static void nsfs_init(void)
{
	uint32_t r = 0;
	struct stat st;

	if (ready)
		return;
	ready = true;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)getpid();
	ino_base = 0xF0000000UL + 0x10000 + (r % 0x0FF00000U & ~0xFU);
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/ns/%s", types[i].name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0) {
			types[i].host_fd = fd;
			types[i].host_ino = st.st_ino;
		} else if (fd >= 0)
			close(fd);
	}
}

static const struct ns_type *entry_type(const char *name)
{
	nsfs_init();
	for (size_t i = 0; i < ARRAY_SIZE(entries); i++)
		if (!strcmp(name, entries[i].entry))
			return types[entries[i].type].host_fd >= 0 ? &types[entries[i].type] : NULL;
	return NULL;
}

static unsigned long ino_of(const struct ns_type *ty)
{
	return ino_base + (unsigned long)(ty - types);
}

/* The type of an open namespace file: its host fd's inode is the sentry's file of that type. */
static const struct ns_type *file_type(struct file *f)
{
	struct stat st;

	if (!f || f->ops != &nsfs_file_ops || fstat(f->host_fd, &st) < 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (types[i].host_fd >= 0 && types[i].host_ino == st.st_ino)
			return &types[i];
	return NULL;
}

/* See pvx/nsfs.h. */
const char *nsfs_entry(size_t n)
{
	nsfs_init();
	for (size_t i = 0; i < ARRAY_SIZE(entries); i++)
		if (types[entries[i].type].host_fd >= 0 && !n--)
			return entries[i].entry;
	return NULL;
}

long nsfs_open(const char *name)
{
	const struct ns_type *ty = entry_type(name);

	if (!ty)
		return -ENOENT;
	int fd = fcntl(ty->host_fd, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? neg_errno() : fd;
}

static long type_name(const struct ns_type *ty, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s:[%lu]", ty->name, ino_of(ty));

	return n < 0 ? -EIO : n;
}

long nsfs_link(const char *name, char *buf, size_t size)
{
	const struct ns_type *ty = entry_type(name);

	return ty ? type_name(ty, buf, size) : -ENOENT;
}

long nsfs_fd_name(struct file *f, char *buf, size_t size)
{
	const struct ns_type *ty = file_type(f);

	return ty ? type_name(ty, buf, size) : -EINVAL;
}

long nsfs_type(struct file *f)
{
	const struct ns_type *ty = file_type(f);

	return ty ? ty->clone_flag : -EINVAL;
}

/* read(2), write(2): ns_file_operations has neither (EINVAL). */
static long ns_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

static long ns_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional)
{
	(void)t, (void)f, (void)buf, (void)count, (void)off, (void)positional;
	return -EINVAL;
}

static void ns_release(struct file *f)
{
	close(f->host_fd);
}

/* fstat: the host's nsfs inode (st_dev, mode, owner) with the sandbox's inode number. */
static long ns_stat(struct file *f, struct stat *st)
{
	const struct ns_type *ty = file_type(f);

	if (!ty)
		return -EIO;
	if (fstat(f->host_fd, st) < 0)
		return neg_errno();
	st->st_ino = ino_of(ty);
	return 0;
}

/* lseek(2): ns_file_operations has no llseek: ESPIPE. */
static long ns_seek(struct file *f, off_t off, int whence)
{
	(void)f, (void)off, (void)whence;
	return -ESPIPE;
}

static long ns_mmap(struct file *f)
{
	(void)f;
	return -ENODEV;
}

/* fstatfs and the xattr calls are the nsfs file's; nothing else reaches the host's namespace file. */
static long ns_object(struct file *f, enum file_call call)
{
	return call == FILE_STATFS || call == FILE_XATTR ? f->host_fd : -ENOENT;
}

/* open_namespace(): a new O_RDONLY, close-on-exec fd of the namespace of type ty. */
static long install_ns(struct task *t, const struct ns_type *ty)
{
	int fd = fcntl(ty->host_fd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return neg_errno();
	struct file *nf = file_new(fd, O_RDONLY, &nsfs_file_ops);
	if (!nf) {
		close(fd);
		return -ENOMEM;
	}
	long r = fd_install(t->files, nf, true, 0);
	file_put(nf);
	return r;
}

/*
 * ns_ioctl() of 6.12. NS_MNT_GET_NEXT/PREV are refused first by their
 * _IOC_NR alone (may_see_all_namespaces: EPERM without CAP_SYS_ADMIN in
 * the initial namespaces). NS_GET_USERNS: every namespace is owned by the
 * sandbox's user namespace, which is the caller's (a new fd of it), but the
 * user namespace's own owner (its parent) is above the caller: EPERM, as
 * ns_get_owner() for the initial one. NS_GET_PARENT: pid and user
 * namespaces have a parent the caller cannot see (EPERM), the others none
 * (EINVAL). NS_GET_OWNER_UID: the owner of the top user namespace is root.
 * The pid translations are within the one pid namespace: the task's own
 * id (ESRCH when there is no such task). Other commands: ENOTTY.
 */
static long ns_ioctl(struct task *t, struct file *f, unsigned long cmd, uint64_t arg)
{
	const struct ns_type *ty = file_type(f);
	uint32_t uid = 0;
	uint64_t id;

	if (!ty)
		return -EIO;
	cmd = (unsigned int)cmd;	/* the kernel's unsigned int: a sign-extended _IOR is the same command */
	if (_IOC_NR(cmd) == NS_MNT_GET_NEXT_NR || _IOC_NR(cmd) == NS_MNT_GET_PREV_NR)
		return -EPERM;
	switch (cmd) {
	case NS_GET_USERNS:
		if (ty->clone_flag == CLONE_NEWUSER)
			return -EPERM;
		return types[4].host_fd >= 0 ? install_ns(t, &types[4]) : -EPERM;
	case NS_GET_PARENT:
		return ty->has_parent ? -EPERM : -EINVAL;
	case NS_GET_NSTYPE:
		return ty->clone_flag;
	case NS_GET_OWNER_UID:
		if (ty->clone_flag != CLONE_NEWUSER)
			return -EINVAL;
		return copy_to_guest(t->mm, arg, &uid, sizeof(uid));
	case NS_GET_MNTNS_ID:
		if (ty->clone_flag != CLONE_NEWNS)
			return -EINVAL;
		id = ino_of(ty);
		return copy_to_guest(t->mm, arg, &id, sizeof(id));
	case NS_GET_PID_FROM_PIDNS:
	case NS_GET_TGID_FROM_PIDNS:
	case NS_GET_PID_IN_PIDNS:
	case NS_GET_TGID_IN_PIDNS:
		if (ty->clone_flag != CLONE_NEWPID)
			return -EINVAL;
		/* find_task_by_vpid(arg): the int the unsigned long holds */
		return fs_kernel->ns_pid((int)arg, cmd == NS_GET_TGID_FROM_PIDNS || cmd == NS_GET_TGID_IN_PIDNS);
	}
	/* NS_MNT_GET_INFO (the extensible ones, by _IOC_NR): its argument checks; the mount count is not kept */
	if (_IOC_NR(cmd) == NS_MNT_GET_INFO_NR && (ty->clone_flag != CLONE_NEWNS || !arg || _IOC_SIZE(cmd) < 16))
		return -EINVAL;
	return -ENOTTY;
}

const struct file_ops nsfs_file_ops = {
	.read = ns_read,
	.write = ns_write,
	.release = ns_release,
	.stat = ns_stat,
	.seek = ns_seek,
	.ioctl = ns_ioctl,
	.mmap = ns_mmap,
	.object = ns_object,
};
