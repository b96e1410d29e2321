// SPDX-License-Identifier: GPL-2.0
/*
 * File handles (fs/fhandle.c): name_to_handle_at encodes the host's handle
 * of the file a guest path names inside the root (the host's opaque bytes
 * and mount id: what stat already tells of the inode); open_by_handle_at
 * needs CAP_DAC_READ_SEARCH, which the sandbox never has, so a handle can
 * never reach a file outside the root.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pvx/path.h"
#include "syscalls/syscalls.h"

#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif
#define AT_HANDLE_CONNECTABLE_ 0x002

/* Is the host object behind fd part of the guest's /proc (a file of the host's /proc it shows, or one it generates)? */
static bool in_proc(int fd)
{
	char guest[PVX_PATH_MAX], host[64], target[PVX_PATH_MAX];

	if (path_of_fd(fd, guest, sizeof(guest)) >= 0 && !strncmp(guest, "/proc", 5) && (guest[5] == '/' || !guest[5]))
		return true;
	snprintf(host, sizeof(host), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(host, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	/* a generated file (procfs.c's memfd) or a directory staged for /proc */
	return !strncmp(target, "/memfd:pvx-proc ", 16) || fs_kernel->proc_dir_path(target, guest, sizeof(guest)) >= 0;
}

/*
 * name_to_handle_at(2): the flags, then the lookup (EBADF, ENOTDIR, EFAULT,
 * ENOENT for "" without AT_EMPTY_PATH), then the handle's header (EFAULT;
 * "EINVAL handle->handle_bytes is greater than MAX_HANDLE_SZ"), then the
 * host's encoding ("EOVERFLOW ... too small", with the size it needs), the
 * mount id and the handle copied out (EFAULT).
 */
long sys_name_to_handle_at(struct task *t, const long a[6])
{
	int flags = (int)a[4];
	char path[PVX_PATH_MAX];
	struct {
		struct file_handle h;
		unsigned char bytes[MAX_HANDLE_SZ];
	} fh;
	long r;

	/* AT_HANDLE_MNT_ID_UNIQUE is EINVAL, as before Linux 6.12; CONNECTABLE is the host's to take */
	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH | AT_HANDLE_FID | AT_HANDLE_CONNECTABLE_))
		return -EINVAL;
	if ((flags & AT_HANDLE_FID) && (flags & AT_HANDLE_CONNECTABLE_))
		return -EINVAL;	/* "mutually exclusive" */
	if ((r = strncpy_from_guest(t->mm, path, (uint64_t)a[1], sizeof(path))) < 0)
		return r;
	int at = (flags & AT_SYMLINK_FOLLOW ? 0 : AT_SYMLINK_NOFOLLOW) | (flags & AT_EMPTY_PATH);
	cleanup_close int hfd = (int)(r = path_lookup(t, (int)a[0], path, at));
	if (r < 0)
		return r;
	/* exportfs_can_encode_fh(): /proc has no export operations, only AT_HANDLE_FID's fid */
	if (!(flags & AT_HANDLE_FID) && in_proc(hfd))
		return -EOPNOTSUPP;
	if ((r = copy_from_guest(t->mm, &fh.h, (uint64_t)a[2], sizeof(fh.h))))
		return r;
	if (fh.h.handle_bytes > MAX_HANDLE_SZ)
		return -EINVAL;
	int mnt = 0;
	r = name_to_handle_at(hfd, "", &fh.h, &mnt, AT_EMPTY_PATH | (flags & (AT_HANDLE_FID | AT_HANDLE_CONNECTABLE_)));
	r = r < 0 ? neg_errno() : 0;
	if (r && r != -EOVERFLOW)
		return r;
	/* As Linux, also on EOVERFLOW: the mount id, and the header with the size needed */
	size_t n = offsetof(struct file_handle, f_handle) + (r ? 0 : fh.h.handle_bytes);
	if (copy_to_guest(t->mm, (uint64_t)a[3], &mnt, sizeof(mnt)) || copy_to_guest(t->mm, (uint64_t)a[2], &fh, n))
		return -EFAULT;
	return r;
}

/*
 * open_by_handle_at(2): "EPERM The caller does not have the
 * CAP_DAC_READ_SEARCH capability" -- the sandbox never has it; a bad
 * mount_fd is EBADF first.
 */
long sys_open_by_handle_at(struct task *t, const long a[6])
{
	if ((int)a[0] != AT_FDCWD && !fd_lookup(t->files, (int)a[0]))
		return -EBADF;
	return -EPERM;
}
