// SPDX-License-Identifier: GPL-2.0
/*
 * AF_UNIX names that are paths: resolved inside --root like every guest
 * path. bind makes the socket file in the directory the O_PATH lookup found
 * (through /proc/self/fd/<dirfd>/<name>, or, when that would not fit in
 * sun_path, relative to the directory made this thread's working directory);
 * connect and sendto name the very socket file the lookup found and checked,
 * as /proc/self/fd/<fd>: a symlink, "..", or a name swapped after the check
 * cannot lead the host call out of the root.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pvx/path.h"
#include "pvx/socket.h"
#include "pvx/task.h"

/*
 * A sentry thread that binds by a relative name gets a working directory and
 * umask of its own (unshare CLONE_FS): changing them for the bind moves no
 * other thread's.
 */
static __thread bool own_fs;

static long thread_fs_private(void)
{
	if (!own_fs) {
		if (unshare(CLONE_FS) < 0)
			return neg_errno();
		own_fs = true;
	}
	return 0;
}

/* The host's bind of f to name (a host path), with the guest's umask for the socket file's mode. */
static long host_bind(struct task *t, struct file *f, int dirfd, const char *name, bool relative)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	long r = thread_fs_private();

	if (r < 0)
		return r;
	size_t n = strlen(name);
	if (n > sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, name, n);
	if (relative && fchdir(dirfd) < 0)
		return neg_errno();
	mode_t old = umask(t->fs->umask & 0777);
	r = bind(f->host_fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
	r = r < 0 ? neg_errno() : 0;
	umask(old);
	if (relative && chdir("/") < 0 && !r)
		r = neg_errno();
	return r;
}

long sock_bind_path(struct task *t, struct file *f, const char *path, const struct guest_sun *gname)
{
	struct sock *s = f->priv;
	char last[PVX_PATH_MAX], host[PVX_PATH_MAX];
	enum path_last type;

	long dirfd = path_parent(t, AT_FDCWD, path, last, sizeof(last), &type);
	if (dirfd < 0)
		return dirfd;
	long r = -EADDRINUSE;	/* "/", ".", "..": the name exists */
	if (type != PATH_LAST_NORM)
		goto out;
	r = -EROFS;		/* after the lookup's errors, before the name's: mnt_want_write() */
	if (!sandbox.rw)
		goto out;
	int n = snprintf(host, sizeof(host), "/proc/self/fd/%ld/%s", dirfd, last);
	bool relative = n < 0 || (size_t)n > sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	r = host_bind(t, f, (int)dirfd, relative ? last : host, relative);
	if (r < 0)
		goto out;
	s->dirfd = (int)dirfd;
	s->guest_name = *gname;
	sock_register_name(f);
	return 0;
out:
	close((int)dirfd);
	return r;
}

long sock_lookup_path(struct task *t, const char *path)
{
	struct stat st;
	long fd = path_open(t, AT_FDCWD, path, O_PATH, 0);

	if (fd < 0)
		return fd;
	if (fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close((int)fd);
		return -ECONNREFUSED;	/* unix_find_bsd(): "not a socket" */
	}
	return fd;
}
