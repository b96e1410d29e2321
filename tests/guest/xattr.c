/* xattr: extended attributes on files the guest makes in the current directory (./xa, ./xl -> xa).
 * usage: xattr        get/set/list/remove through paths, symlinks and fds, with Linux's errors for bad
 *                     names, sizes, flags and pointers, on an O_PATH fd, a pipe and /proc
 *        xattr priv   the names only a privileged host user may write: security.* and trusted.*
 *        xattr ro     writes in a read-only root: EROFS; reads work
 * Raw syscalls: both libcs' wrappers are thin, and bad pointers must reach the kernel. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BAD ((void *)16)

static const char *err(long r)
{
	static char buf[64];
	if (r >= 0) {
		snprintf(buf, sizeof(buf), "%ld", r);
		return buf;
	}
	switch (errno) {
	case EFAULT: return "EFAULT";
	case ERANGE: return "ERANGE";
	case E2BIG: return "E2BIG";
	case EINVAL: return "EINVAL";
	case EEXIST: return "EEXIST";
	case ENODATA: return "ENODATA";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EBADF: return "EBADF";
	case EROFS: return "EROFS";
	case ENOENT: return "ENOENT";
	default: snprintf(buf, sizeof(buf), "errno %d", errno); return buf;
	}
}

#define SHOW(what, call) printf("%-44s %s\n", what, err(call))

/* The user. names of a list, in order (a root's file may carry security.* labels too). */
static void show_list(const char *what, long n, const char *buf)
{
	printf("%-44s", what);
	if (n < 0) {
		printf(" %s\n", err(n));
		return;
	}
	for (long at = 0; at < n; at += (long)strlen(buf + at) + 1)
		if (!strncmp(buf + at, "user.", 5))
			printf(" %s", buf + at);
	printf("\n");
}

static void common(void)
{
	char buf[256], name[300];
	long n;

	unlink("xl");
	unlink("xa");
	int fd = open("xa", O_CREAT | O_RDWR, 0644);
	if (fd < 0 || symlink("xa", "xl") < 0) {
		perror("setup");
		return;
	}
	SHOW("setxattr user.pvx", syscall(SYS_setxattr, "xa", "user.pvx", "value", 5, 0));
	SHOW("getxattr size 0 (how big)", syscall(SYS_getxattr, "xa", "user.pvx", NULL, 0));
	n = syscall(SYS_getxattr, "xa", "user.pvx", buf, sizeof(buf));
	printf("%-44s %s %.*s\n", "getxattr", err(n), n > 0 ? (int)n : 0, buf);
	SHOW("getxattr into 2 bytes", syscall(SYS_getxattr, "xa", "user.pvx", buf, 2));
	SHOW("getxattr through the symlink", syscall(SYS_getxattr, "xl", "user.pvx", buf, sizeof(buf)));
	SHOW("lgetxattr of the symlink itself", syscall(SYS_lgetxattr, "xl", "user.pvx", buf, sizeof(buf)));
	SHOW("lsetxattr user. on a symlink", syscall(SYS_lsetxattr, "xl", "user.l", "v", 1, 0));
	SHOW("XATTR_CREATE of an existing name", syscall(SYS_setxattr, "xa", "user.pvx", "v", 1, 1));
	SHOW("XATTR_REPLACE of a missing name", syscall(SYS_setxattr, "xa", "user.none", "v", 1, 2));
	SHOW("flags 0x10", syscall(SYS_setxattr, "xa", "user.pvx", "v", 1, 0x10));
	SHOW("fsetxattr user.two (empty value)", syscall(SYS_fsetxattr, fd, "user.two", "", 0, 0));
	n = syscall(SYS_listxattr, "xa", buf, sizeof(buf));
	show_list("listxattr", n, buf);
	n = syscall(SYS_flistxattr, fd, buf, sizeof(buf));
	show_list("flistxattr", n, buf);
	SHOW("listxattr into 1 byte", syscall(SYS_listxattr, "xa", buf, 1));
	SHOW("empty name", syscall(SYS_setxattr, "xa", "", "v", 1, 0));
	memset(name, 'a', sizeof(name) - 1);
	memcpy(name, "user.", 5);
	name[sizeof(name) - 1] = 0;
	SHOW("a 299-byte name", syscall(SYS_setxattr, "xa", name, "v", 1, 0));
	SHOW("getxattr of a 299-byte name", syscall(SYS_getxattr, "xa", name, buf, sizeof(buf)));
	SHOW("the name user. alone", syscall(SYS_setxattr, "xa", "user.", "v", 1, 0));
	SHOW("an unknown namespace", syscall(SYS_setxattr, "xa", "foo.bar", "v", 1, 0));
	SHOW("getxattr of an unknown namespace", syscall(SYS_getxattr, "xa", "foo.bar", buf, sizeof(buf)));
	SHOW("a 70000-byte value", syscall(SYS_setxattr, "xa", "user.big", buf, 70000, 0));
	SHOW("a bad value pointer", syscall(SYS_setxattr, "xa", "user.bad", BAD, 4, 0));
	SHOW("a bad name pointer", syscall(SYS_setxattr, "xa", BAD, "v", 1, 0));
	SHOW("a bad path pointer", syscall(SYS_getxattr, BAD, "user.pvx", buf, sizeof(buf)));
	SHOW("getxattr into a bad buffer", syscall(SYS_getxattr, "xa", "user.pvx", BAD, 64));
	SHOW("listxattr into a bad buffer", syscall(SYS_listxattr, "xa", BAD, 64));
	SHOW("getxattr of a missing file", syscall(SYS_getxattr, "nonexistent", "user.pvx", buf, 8));
	int opath = open("xa", O_PATH);
	SHOW("fgetxattr of an O_PATH fd", syscall(SYS_fgetxattr, opath, "user.pvx", buf, sizeof(buf)));
	SHOW("fsetxattr of an O_PATH fd", syscall(SYS_fsetxattr, opath, "user.x", "v", 1, 0));
	SHOW("fgetxattr of fd 999", syscall(SYS_fgetxattr, 999, "user.pvx", buf, sizeof(buf)));
	int p[2];
	if (pipe(p) == 0) {
		SHOW("fgetxattr of a pipe", syscall(SYS_fgetxattr, p[0], "user.pvx", buf, sizeof(buf)));
		SHOW("fsetxattr of a pipe", syscall(SYS_fsetxattr, p[0], "user.pvx", "v", 1, 0));
		SHOW("flistxattr of a pipe", syscall(SYS_flistxattr, p[0], buf, sizeof(buf)));
	}
	SHOW("getxattr of /proc/self/status", syscall(SYS_getxattr, "/proc/self/status", "user.pvx", buf, 8));
	SHOW("setxattr of /proc/self/status", syscall(SYS_setxattr, "/proc/self/status", "user.pvx", "v", 1, 0));
	SHOW("listxattr of /proc/self/status", syscall(SYS_listxattr, "/proc/self/status", buf, sizeof(buf)));
	SHOW("removexattr user.pvx", syscall(SYS_removexattr, "xa", "user.pvx"));
	SHOW("getxattr after remove", syscall(SYS_getxattr, "xa", "user.pvx", buf, sizeof(buf)));
	SHOW("fremovexattr user.two", syscall(SYS_fremovexattr, fd, "user.two"));
	SHOW("removexattr of a missing name", syscall(SYS_removexattr, "xa", "user.two"));
	close(fd);
	close(opath);
}

static void priv(void)
{
	char buf[64];

	int fd = open("xa", O_CREAT | O_RDWR, 0644);
	SHOW("getxattr trusted.pvx", syscall(SYS_getxattr, "xa", "trusted.pvx", buf, sizeof(buf)));
	long n = syscall(SYS_listxattr, "xa", buf, sizeof(buf));
	int trusted = 0;
	for (long at = 0; at < n; at += (long)strlen(buf + at) + 1)
		trusted += !strncmp(buf + at, "trusted.", 8);
	printf("%-44s %d\n", "trusted. names listed", trusted);
	SHOW("setxattr security.capability", syscall(SYS_setxattr, "xa", "security.capability", "\1\0\0\2", 4, 0));
	SHOW("fsetxattr security.capability", syscall(SYS_fsetxattr, fd, "security.capability", "\1\0\0\2", 4, 0));
	SHOW("setxattr trusted.pvx", syscall(SYS_setxattr, "xa", "trusted.pvx", "v", 1, 0));
	SHOW("removexattr trusted.pvx", syscall(SYS_removexattr, "xa", "trusted.pvx"));
	close(fd);
}

static void ro(void)
{
	char buf[64];

	SHOW("setxattr in a read-only root", syscall(SYS_setxattr, "xa", "user.ro", "v", 1, 0));
	SHOW("removexattr in a read-only root", syscall(SYS_removexattr, "xa", "user.pvx"));
	SHOW("security. in a read-only root", syscall(SYS_setxattr, "xa", "security.capability", "v", 1, 0));
	long n = syscall(SYS_getxattr, "xa", "user.pvx", buf, sizeof(buf));
	printf("%-44s %s %.*s\n", "getxattr in a read-only root", err(n), n > 0 ? (int)n : 0, buf);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "priv"))
		priv();
	else if (argc > 1 && !strcmp(argv[1], "ro"))
		ro();
	else
		common();
	return 0;
}
