/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host helpers every kind that is a host fd underneath shares
 * (sentry/fs/host_file.c): each is the host's call on f->host_fd. A kind
 * takes those whose behaviour is its own and answers the rest itself.
 */
#ifndef PVX_FS_HOST_FILE_H
#define PVX_FS_HOST_FILE_H

#include "pvx/file.h"

long host_read(struct task *t, struct file *f, void *buf, size_t count, off_t off, bool positional);
long host_write(struct task *t, struct file *f, const void *buf, size_t count, off_t off, bool positional);
long host_rw_in_guest_mm(struct task *t, struct file *f, bool write, uint64_t ubuf, size_t count, off_t off,
			 bool positional);
long host_rw_vec(struct task *t, struct file *f, bool write, void *buf, size_t count, off_t off, int rwf);
void host_release(struct file *f);
long host_stat(struct file *f, struct stat *st);
long host_seek(struct file *f, off_t off, int whence);
short host_poll(struct file *f, short events);
long host_fionread(struct task *t, struct file *f, uint64_t arg);
long host_mmap(struct file *f);
long host_getdents(struct task *t, struct file *f, void *buf, size_t count);
long host_fcntl(struct task *t, struct file *f, int cmd, unsigned long arg);
long host_getfl(struct file *f);
long host_setfl(struct file *f, int flags);
long host_object(struct file *f, enum file_call call);
/* The object of a host anonymous inode (eventfd, timerfd, inotify): none for its mode, owner, times, flock, path, reopen, passing. */
long anon_object(struct file *f, enum file_call call);

#endif
