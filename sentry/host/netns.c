// SPDX-License-Identifier: GPL-2.0
/*
 * The sandbox's network (pvx/netns.h): the host kernel's own stack in a
 * network namespace pvx makes at start, with loopback only, as runsc's
 * --network=none. The sockets the sentry makes for the guest live there;
 * abstract AF_UNIX names are per namespace, so they are the sandbox's too.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pvx/netns.h"
#include "pvx/sandbox.h"

/* Write s to the file path (uid_map, gid_map, setgroups of /proc/self). */
static long write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	long r = 0;

	if (fd < 0)
		return neg_errno();
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		r = neg_errno();
	close(fd);
	return r;
}

/* A user namespace in which pvx keeps its own uid and gid (and nothing else is mapped). */
static long enter_userns(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return neg_errno();
	long r = write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	if (!r)
		r = write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	if (!r)
		r = write_file("/proc/self/gid_map", map);
	return r;
}

/*
 * lo up (SIOCSIFFLAGS), with multicast: IFF_MULTICAST, and IPv4's
 * 224.0.0.0/4 routed to it (SIOCADDRT), so that a guest joining a group on
 * no interface in particular finds one, as it does on a host with a
 * default route (LTP accept02; ENODEV otherwise).
 */
static long loopback_up(void)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long r = 0;

	if (s < 0)
		return neg_errno();
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		r = neg_errno();
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING | IFF_MULTICAST;
	if (!r && ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		r = neg_errno();
	struct rtentry rt = { .rt_flags = RTF_UP, .rt_dev = (char[]){ "lo" } };
	struct sockaddr_in *dst = (struct sockaddr_in *)&rt.rt_dst, *mask = (struct sockaddr_in *)&rt.rt_genmask;
	dst->sin_family = mask->sin_family = AF_INET;
	dst->sin_addr.s_addr = htonl(0xe0000000);
	mask->sin_addr.s_addr = htonl(0xf0000000);
	if (!r && ioctl(s, SIOCADDRT, &rt) < 0 && errno != EEXIST)
		r = neg_errno();
	close(s);
	return r;
}

/*
 * The capabilities a new user namespace gives its creator: none is needed
 * once loopback is up, and with them the sentry could override permissions
 * of its user's own files (CAP_DAC_OVERRIDE on a 0444 file) for the guest.
 */
static long drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	return syscall(SYS_capset, &h, d) < 0 ? neg_errno() : 0;
}

/*
 * A user namespace cannot be left again: if its id maps could not be
 * written pvx would be stuck with unmapped ids. So a child tries it all
 * first (its exit status the errno), and pvx follows only if it worked.
 */
static long userns_probe(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return neg_errno();
	if (pid == 0) {
		long r = enter_userns();
		_exit((int)-(r ?: loopback_up()));
	}
	if (waitpid(pid, &st, 0) < 0)
		return neg_errno();
	return !WIFEXITED(st) ? -ECHILD : -WEXITSTATUS(st);
}

void netns_setup(bool host)
{
	bool root = geteuid() == 0;
	long r;

	sandbox.net_host = host;
	if (host)
		return;
	if (root)
		r = unshare(CLONE_NEWNET) < 0 ? neg_errno() : 0;
	else if (!(r = userns_probe()))
		r = enter_userns();
	if (!r)
		r = loopback_up();
	if (!r && !root)
		r = drop_caps();
	if (!r)
		return;
	fprintf(stderr, "pvx: --network=none: cannot make a network namespace of the sandbox's own (%s%s): "
			"the guest gets no AF_INET/AF_INET6 sockets (EACCES) and no abstract AF_UNIX names\n",
		root ? "unshare(CLONE_NEWNET): " : "user and network namespace: ", strerror((int)-r));
	sandbox.net_blocked = true;
}
