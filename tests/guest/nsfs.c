/* nsfs: /proc/PID/ns links, namespace files, their ioctls and setns(2). usage: nsfs MODE
 *   links   readlink "TYPE:[INODE]", lstat lrwxrwxrwx, open: fstat st_ino = INODE, one st_dev for all, fstatfs
 *           NSFS_MAGIC, the same in a child, distinct per type, /proc/self/fd/N names it, read EINVAL, readdir
 *   ioctl   NS_GET_NSTYPE, NS_GET_USERNS, NS_GET_PARENT, NS_GET_OWNER_UID, the pid ioctls, others ENOTTY/EPERM/EFAULT
 *   setns   re-entering its own namespaces unprivileged (EPERM; EINVAL for user), wrong nstype, non-ns fds,
 *           O_PATH fds, pidfds with bad masks, an exited process's pidfd
 * Run natively as root it first becomes nobody (the sandbox's guest holds no capability either). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NSIO 0xb7
#define NS_GET_USERNS _IO(NSIO, 0x1)
#define NS_GET_PARENT _IO(NSIO, 0x2)
#define NS_GET_NSTYPE _IO(NSIO, 0x3)
#define NS_GET_OWNER_UID _IO(NSIO, 0x4)
#define NS_GET_PID_FROM_PIDNS _IOR(NSIO, 0x6, int)
#define NS_GET_TGID_FROM_PIDNS _IOR(NSIO, 0x7, int)
#define NS_GET_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#define NS_MNT_GET_NEXT _IOR(NSIO, 11, char[16])
#define NSFS_MAGIC_ 0x6e736673
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif

static const char *const names[] = { "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children",
				     "time", "time_for_children", "user", "uts" };
#define N (sizeof(names) / sizeof(names[0]))

static const char *errname(int e)
{
	static const struct { int e; const char *n; } t[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" }, { EBADF, "EBADF" }, { EACCES, "EACCES" },
		{ EFAULT, "EFAULT" }, { EEXIST, "EEXIST" }, { ENOTDIR, "ENOTDIR" }, { EINVAL, "EINVAL" },
		{ ENOTTY, "ENOTTY" }, { ESPIPE, "ESPIPE" }, { ELOOP, "ELOOP" }, { EUSERS, "EUSERS" },
		{ ENAMETOOLONG, "ENAMETOOLONG" }, { EISDIR, "EISDIR" }, { ENODEV, "ENODEV" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == e)
			return t[i].n;
	return "E?";
}

static const char *en(long r)
{
	static char b[64];
	if (r >= 0)
		snprintf(b, sizeof(b), "ok");
	else
		snprintf(b, sizeof(b), "%s", errname(errno));
	return b;
}

static const char *type_name(long t)
{
	switch (t) {
	case CLONE_NEWNS: return "CLONE_NEWNS";
	case CLONE_NEWUTS: return "CLONE_NEWUTS";
	case CLONE_NEWIPC: return "CLONE_NEWIPC";
	case CLONE_NEWNET: return "CLONE_NEWNET";
	case CLONE_NEWPID: return "CLONE_NEWPID";
	case CLONE_NEWUSER: return "CLONE_NEWUSER";
	case CLONE_NEWCGROUP: return "CLONE_NEWCGROUP";
	case CLONE_NEWTIME: return "CLONE_NEWTIME";
	}
	return "?";
}

static void drop(void)
{
	if (getuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
		exit(3);
	prctl(PR_SET_DUMPABLE, 1);	/* /proc/self stays its own (setuid made it root's) */
}

static int open_ns(const char *name, int flags, ...)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/ns/%s", name);
	return open(p, flags, 0600);
}

static unsigned long link_ino(const char *dir, const char *name, char *type)
{
	char p[128], t[64];
	unsigned long ino = 0;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ssize_t n = readlink(p, t, sizeof(t) - 1);
	if (n < 0)
		return 0;
	t[n] = 0;
	char *c = strchr(t, ':');
	if (!c || sscanf(c, ":[%lu]", &ino) != 1)
		return 0;
	*c = 0;
	if (type)
		strcpy(type, t);
	return ino;
}

static int links(void)
{
	unsigned long ino[N];
	dev_t dev = 0;
	char type[64], buf[64];
	struct stat st, ls;
	struct statfs sf;

	for (size_t i = 0; i < N; i++) {
		ino[i] = link_ino("/proc/self/ns", names[i], type);
		char p[64];
		snprintf(p, sizeof(p), "/proc/self/ns/%s", names[i]);
		int lr = lstat(p, &ls);
		int fd = open_ns(names[i], O_RDONLY | O_CLOEXEC);
		printf("%s: link %s, lstat %s mode 0%o, open %s", names[i], ino[i] ? type : "none", en(lr),
		       lr ? 0 : ls.st_mode, en(fd));
		if (fd < 0) {
			printf("\n");
			continue;
		}
		fstat(fd, &st);
		if (!dev)
			dev = st.st_dev;
		int sr = fstatfs(fd, &sf);
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(p, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		char want[64];
		snprintf(want, sizeof(want), "%.20s:[%lu]", type, ino[i]);
		long rd = read(fd, buf, 1);
		const char *rde = en(rd);
		char rdb[64];
		snprintf(rdb, sizeof(rdb), "%s", rde);
		long sk = lseek(fd, 0, SEEK_SET);
		printf(", fstat mode 0%o ino=link %s, same dev %s, statfs %s, fd link %s, read %s, lseek %s\n",
		       st.st_mode, st.st_ino == ino[i] ? "yes" : "no", st.st_dev == dev ? "yes" : "no",
		       sr == 0 && sf.f_type == NSFS_MAGIC_ ? "nsfs" : "other", strcmp(buf, want) ? buf : "= link", rdb,
		       en(sk));
		close(fd);
	}
	int distinct = 0;
	for (size_t i = 0; i < N; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= ino[j] == ino[i];
		distinct += ino[i] && !seen;
	}
	printf("distinct inodes: %d; pid_for_children = pid: %s; time_for_children = time: %s\n", distinct,
	       ino[4] == ino[5] ? "yes" : "no", ino[6] == ino[7] ? "yes" : "no");
	pid_t c = fork();
	if (c == 0) {
		int same = 1;
		for (size_t i = 0; i < N; i++)
			same &= link_ino("/proc/self/ns", names[i], NULL) == ino[i];
		_exit(same ? 0 : 1);
	}
	int ws;
	waitpid(c, &ws, 0);
	printf("child's links the same: %s\n", WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? "yes" : "no");
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns", getpid());
	int same = 1;
	for (size_t i = 0; i < N; i++)
		same &= link_ino(p, names[i], NULL) == ino[i];
	printf("/proc/PID/ns the same: %s\n", same ? "yes" : "no");
	DIR *d = opendir("/proc/self/ns");
	int count = 0, lnk = 1;
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.')
			count++, lnk &= e->d_type == DT_LNK;
	printf("readdir: %d entries, all DT_LNK: %s\n", count, lnk ? "yes" : "no");
	printf("O_NOFOLLOW: %s\n", en(open_ns("net", O_RDONLY | O_NOFOLLOW)));
	printf("O_WRONLY: %s\n", en(open_ns("net", O_WRONLY)));
	printf("O_RDONLY|O_TRUNC: %s\n", en(open_ns("net", O_RDONLY | O_TRUNC)));
	printf("O_CREAT|O_EXCL: %s\n", en(open_ns("net", O_RDONLY | O_CREAT | O_EXCL, 0600)));
	printf("O_DIRECTORY: %s\n", en(open_ns("net", O_RDONLY | O_DIRECTORY)));
	printf("net/x: %s\n", en(open("/proc/self/ns/net/x", O_RDONLY)));
	printf("nosuch: %s\n", en(open("/proc/self/ns/nosuch", O_RDONLY)));
	int nf = open_ns("ipc", O_RDONLY);
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", nf);
	FILE *fi = fopen(p, "r");
	char line[128];
	unsigned long fino = 0;
	while (fi && fgets(line, sizeof(line), fi))
		sscanf(line, "ino: %lu", &fino);
	printf("fdinfo ino = link: %s\n", fino == ino[1] ? "yes" : "no");
		int op = open_ns("uts", O_PATH);
	printf("O_PATH: %s, fstat ino=link %s\n", en(op), op >= 0 && !fstat(op, &st) && st.st_ino == ino[9] ? "yes" : "no");
	return 0;
}

static int ioctls(void)
{
	unsigned long user_ino = link_ino("/proc/self/ns", "user", NULL);
	struct stat st;

	for (size_t i = 0; i < N; i++) {
		int fd = open_ns(names[i], O_RDONLY);
		if (fd < 0)
			continue;
		long t = ioctl(fd, NS_GET_NSTYPE);
		int u = ioctl(fd, NS_GET_USERNS);
		char ub[64];
		snprintf(ub, sizeof(ub), "%s", en(u));
		if (u >= 0) {
			int cl = fcntl(u, F_GETFD);
			snprintf(ub, sizeof(ub), "fd of user ns %s, cloexec %s, O_RDONLY %s",
				 !fstat(u, &st) && st.st_ino == user_ino ? "yes" : "no", cl == FD_CLOEXEC ? "yes" : "no",
				 (fcntl(u, F_GETFL) & O_ACCMODE) == O_RDONLY ? "yes" : "no");
			close(u);
		}
		int pr = ioctl(fd, NS_GET_PARENT);
		char pb[32];
		snprintf(pb, sizeof(pb), "%s", en(pr));
		uid_t uid = 4242;
		int ow = ioctl(fd, NS_GET_OWNER_UID, &uid);
		char ob[32];
		snprintf(ob, sizeof(ob), "%s", en(ow));
		printf("%s: NSTYPE %s; USERNS %s; PARENT %s; OWNER_UID %s %u\n", names[i], type_name(t), ub, pb, ob,
		       ow ? 4242 : uid);
		static const struct { unsigned long cmd; long arg; const char *what; } pc[] = {
			{ NS_GET_PID_FROM_PIDNS, 0, "PID_FROM_PIDNS(self)" }, { NS_GET_TGID_FROM_PIDNS, 0, "TGID_FROM_PIDNS(self)" },
			{ NS_GET_PID_IN_PIDNS, 0, "PID_IN_PIDNS(self)" }, { NS_GET_PID_FROM_PIDNS, 99999, "PID_FROM_PIDNS(99999)" },
			{ NS_GET_PID_FROM_PIDNS, -1, "PID_FROM_PIDNS(-1)" }, { TCGETS, 1, "TCGETS" },
			{ NS_MNT_GET_NEXT, 1, "nr 11" }, { _IO(NSIO, 0x20), 1, "nr 0x20" },
		};
		printf(" ");
		for (size_t k = 0; k < sizeof(pc) / sizeof(pc[0]); k++) {
			long arg = pc[k].arg == 0 ? getpid() : pc[k].arg == 1 ? (long)&st : pc[k].arg;
			long r = ioctl(fd, pc[k].cmd, arg);
			printf(" %s %s", pc[k].what, r >= 0 ? (r == getpid() ? "=self" : "other") : en(r));
		}
		printf("\n");
		close(fd);
	}
	int fd = open_ns("user", O_RDONLY);
	printf("OWNER_UID(bad pointer): %s\n", en(ioctl(fd, NS_GET_OWNER_UID, (void *)8)));
	int op = open_ns("user", O_PATH);
	printf("NSTYPE on O_PATH: %s\n", en(ioctl(op, NS_GET_NSTYPE)));
	int pfd[2];
	pipe(pfd);
	printf("NSTYPE on a pipe: %s\n", en(ioctl(pfd[0], NS_GET_NSTYPE)));
	return 0;
}

static int setnses(void)
{
	for (size_t i = 0; i < N; i++) {
		int fd = open_ns(names[i], O_RDONLY);
		if (fd < 0)
			continue;
		long t = ioctl(fd, NS_GET_NSTYPE);
		char a[32], b[32];
		snprintf(a, sizeof(a), "%s", en(setns(fd, 0)));
		snprintf(b, sizeof(b), "%s", en(setns(fd, (int)t)));
		printf("setns(%s, 0) %s, (own type) %s, (CLONE_NEWUTS|CLONE_NEWNET) %s\n", names[i], a, b,
		       en(setns(fd, CLONE_NEWUTS | CLONE_NEWNET)));
		close(fd);
	}
	int fd = open_ns("uts", O_RDONLY);
	printf("setns(uts, CLONE_NEWNET): %s\n", en(setns(fd, CLONE_NEWNET)));
	printf("setns(uts, -1): %s\n", en(setns(fd, -1)));
	int op = open_ns("uts", O_PATH);
	printf("setns(O_PATH): %s\n", en(setns(op, 0)));
	printf("setns(-1): %s\n", en(setns(-1, 0)));
	printf("setns(closed): %s\n", en(setns(999, 0)));
	int pfd[2];
	pipe(pfd);
	printf("setns(pipe): %s\n", en(setns(pfd[0], 0)));
	int dir = open("/proc/self", O_RDONLY | O_DIRECTORY);
	printf("setns(/proc/self dir, CLONE_NEWUTS): %s\n", en(setns(dir, CLONE_NEWUTS)));
	int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	printf("pidfd: 0 %s", en(setns(self, 0)));
	printf(", 1 %s", en(setns(self, 1)));
	printf(", CLONE_NEWUTS %s", en(setns(self, CLONE_NEWUTS)));
	printf(", CLONE_NEWTIME %s", en(setns(self, CLONE_NEWTIME)));
	printf(", CLONE_NEWUSER|CLONE_NEWUTS %s", en(setns(self, CLONE_NEWUSER | CLONE_NEWUTS)));
	printf(", CLONE_NEWUTS|CLONE_NEWNS %s\n", en(setns(self, CLONE_NEWUTS | CLONE_NEWNS)));
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	int cfd = (int)syscall(SYS_pidfd_open, c, 0);
	siginfo_t si;
	waitid(P_PID, c, &si, WEXITED | WNOWAIT);
	printf("exited child's pidfd: CLONE_NEWUTS %s", en(setns(cfd, CLONE_NEWUTS)));
	printf(", 0 %s\n", en(setns(cfd, 0)));
	waitpid(c, NULL, 0);
	printf("reaped child's pidfd: CLONE_NEWUTS %s\n", en(setns(cfd, CLONE_NEWUTS)));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	drop();
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "links"))
		return links();
	if (!strcmp(argv[1], "ioctl"))
		return ioctls();
	if (!strcmp(argv[1], "setns"))
		return setnses();
	return 2;
}
