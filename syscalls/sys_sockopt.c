// SPDX-License-Identifier: GPL-2.0
/*
 * getsockopt(2) and setsockopt(2): the common options of the socket,
 * IP, IPv6, TCP and UDP levels go to the host socket with the value in a
 * sentry buffer (none of them carries a pointer); options that need
 * privilege on the host (SO_MARK, SO_BINDTODEVICE, *BUFFORCE, filters, a
 * congestion control module to load) are not passed (EPERM, or ENOPROTOOPT
 * for those pvx does not know). SO_PEERCRED shows guest pids and ids.
 */
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <string.h>

#include "syscalls/sockaddr.h"

#define OPT_MAX 1024	/* the largest value passed (struct group_source_req is 264 bytes, tcp_info 232) */

#ifndef SO_RCVTIMEO_NEW
#define SO_RCVTIMEO_NEW 66
#define SO_SNDTIMEO_NEW 67
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* SOL_SOCKET options the host answers for the guest as for itself. */
static const int sol_socket_ok[] = {
	SO_DEBUG, SO_REUSEADDR, SO_TYPE, SO_ERROR, SO_DONTROUTE, SO_BROADCAST, SO_SNDBUF, SO_RCVBUF,
	SO_KEEPALIVE, SO_OOBINLINE, SO_NO_CHECK, SO_LINGER, SO_REUSEPORT, SO_PASSCRED, SO_RCVLOWAT,
	SO_SNDLOWAT, SO_RCVTIMEO, SO_SNDTIMEO, SO_RCVTIMEO_NEW, SO_SNDTIMEO_NEW, SO_TIMESTAMP, SO_TIMESTAMPNS,
	SO_ACCEPTCONN, SO_PROTOCOL, SO_DOMAIN, SO_PEEK_OFF, SO_RXQ_OVFL, SO_BUSY_POLL, SO_INCOMING_CPU,
	SO_COOKIE, SO_PRIORITY,
};
/* ... and those that need CAP_NET_ADMIN or CAP_NET_RAW, or carry a pointer: EPERM. */
static const int sol_socket_refused[] = {
	SO_MARK, SO_BINDTODEVICE, SO_RCVBUFFORCE, SO_SNDBUFFORCE, SO_ATTACH_FILTER, SO_ATTACH_BPF,
	SO_DETACH_FILTER, SO_LOCK_FILTER,
};
static const int sol_ip_ok[] = {
	IP_TOS, IP_TTL, IP_HDRINCL, IP_OPTIONS, IP_RECVOPTS, IP_RETOPTS, IP_PKTINFO, IP_MTU_DISCOVER, IP_RECVERR,
	IP_RECVTTL, IP_RECVTOS, IP_MTU, IP_FREEBIND, IP_MULTICAST_IF, IP_MULTICAST_TTL, IP_MULTICAST_LOOP,
	IP_ADD_MEMBERSHIP, IP_DROP_MEMBERSHIP, IP_BIND_ADDRESS_NO_PORT, IP_UNBLOCK_SOURCE, IP_BLOCK_SOURCE,
	IP_ADD_SOURCE_MEMBERSHIP, IP_DROP_SOURCE_MEMBERSHIP, IP_MSFILTER, IP_MULTICAST_ALL, MCAST_JOIN_GROUP,
	MCAST_BLOCK_SOURCE, MCAST_UNBLOCK_SOURCE, MCAST_LEAVE_GROUP, MCAST_JOIN_SOURCE_GROUP, MCAST_LEAVE_SOURCE_GROUP,
	MCAST_MSFILTER,
};
static const int sol_ipv6_ok[] = {
	IPV6_V6ONLY, IPV6_UNICAST_HOPS, IPV6_MULTICAST_IF, IPV6_MULTICAST_HOPS, IPV6_MULTICAST_LOOP,
	IPV6_ADD_MEMBERSHIP, IPV6_DROP_MEMBERSHIP, IPV6_RECVPKTINFO, IPV6_PKTINFO, IPV6_RECVHOPLIMIT,
	IPV6_HOPLIMIT, IPV6_RECVERR, IPV6_MTU_DISCOVER, IPV6_MTU, IPV6_TCLASS, IPV6_RECVTCLASS, MCAST_JOIN_GROUP,
	MCAST_BLOCK_SOURCE, MCAST_UNBLOCK_SOURCE, MCAST_LEAVE_GROUP, MCAST_JOIN_SOURCE_GROUP, MCAST_LEAVE_SOURCE_GROUP,
	MCAST_MSFILTER,
};
static const int sol_tcp_ok[] = {
	TCP_NODELAY, TCP_MAXSEG, TCP_CORK, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_SYNCNT, TCP_LINGER2,
	TCP_DEFER_ACCEPT, TCP_WINDOW_CLAMP, TCP_INFO, TCP_QUICKACK, TCP_USER_TIMEOUT, TCP_FASTOPEN,
	TCP_NOTSENT_LOWAT, TCP_CONGESTION,
};
static const int sol_udp_ok[] = { UDP_CORK, UDP_SEGMENT, UDP_GRO };
/* Netlink's, without NETLINK_LISTEN_ALL_NSID (other namespaces' messages; CAP_NET_BROADCAST: EPERM). */
static const int sol_netlink_ok[] = {
	NETLINK_ADD_MEMBERSHIP, NETLINK_DROP_MEMBERSHIP, NETLINK_PKTINFO, NETLINK_BROADCAST_ERROR,
	NETLINK_NO_ENOBUFS, NETLINK_LIST_MEMBERSHIPS, NETLINK_CAP_ACK, NETLINK_EXT_ACK, NETLINK_GET_STRICT_CHK,
};

static bool in(const int *list, size_t n, int opt)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == opt)
			return true;
	return false;
}

#define IN(list, opt) in(list, ARRAY_SIZE(list), opt)

/*
 * 0 when (level, opt) may go to the host; else the guest's error. set: the
 * call is setsockopt. AF_UNIX sockets have only SOL_SOCKET options (Linux:
 * no ops->setsockopt, EOPNOTSUPP). On an inet socket a level that is not
 * the transport's goes on to the IP layer, as tcp_/udp_[gs]etsockopt pass
 * it: ip_getsockopt answers EOPNOTSUPP for a level not SOL_IP,
 * ip_setsockopt and ipv6_[gs]etsockopt ENOPROTOOPT (the latter passing
 * SOL_IP on to the former).
 */
static long opt_allowed(const struct sock *s, int level, int opt, bool set)
{
	if (s->family == AF_UNIX && level != SOL_SOCKET)
		return -EOPNOTSUPP;
	if (s->family == AF_NETLINK && level != SOL_SOCKET) {
		if (level != SOL_NETLINK)
			return -ENOPROTOOPT;
		return IN(sol_netlink_ok, opt) ? 0 : opt == NETLINK_LISTEN_ALL_NSID ? -EPERM : -ENOPROTOOPT;
	}
	if (level == SOL_SOCKET) {
		if (IN(sol_socket_ok, opt) || opt == SO_PEERCRED)
			return 0;
		return IN(sol_socket_refused, opt) ? -EPERM : -ENOPROTOOPT;
	}
	if (s->type == SOCK_STREAM && level == IPPROTO_TCP) {
		if (set && opt == TCP_CONGESTION)
			return -EPERM;	/* it may load a module on the host */
		return IN(sol_tcp_ok, opt) ? 0 : -ENOPROTOOPT;
	}
	if (s->type == SOCK_DGRAM && level == IPPROTO_UDP)
		return IN(sol_udp_ok, opt) ? 0 : -ENOPROTOOPT;
	if (level == IPPROTO_IP)
		return IN(sol_ip_ok, opt) ? 0 : -ENOPROTOOPT;
	if (s->family == AF_INET6 && level == IPPROTO_IPV6)
		return IN(sol_ipv6_ok, opt) ? 0 : -ENOPROTOOPT;
	return s->family == AF_INET && !set ? -EOPNOTSUPP : -ENOPROTOOPT;
}

long sys_setsockopt(struct task *t, const long a[6])
{
	int level = (int)a[1], opt = (int)a[2], len = (int)a[4];
	char val[OPT_MAX] __attribute__((aligned(8)));
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);
	long r;

	if (!s)
		return f ? -ENOTSOCK : -EBADF;
	if (len < 0)
		return -EINVAL;
	if ((r = opt_allowed(s, level, opt, true)))
		return r;
	if (level == SOL_SOCKET && opt == SO_PRIORITY) {
		int prio;
		if (len >= (int)sizeof(prio) && !copy_from_guest(t->mm, &prio, (uint64_t)a[3], sizeof(prio)) &&
		    (prio < 0 || prio > 6))
			return -EPERM;	/* "above 6 requires CAP_NET_ADMIN" */
	}
	len = MIN(len, OPT_MAX);
	memset(val, 0, sizeof(val));
	if (len && (r = copy_from_guest(t->mm, val, (uint64_t)a[3], (size_t)len)))
		return r;
	return setsockopt(f->host_fd, level, opt, val, (socklen_t)len) < 0 ? neg_errno() : 0;
}

/*
 * SO_PEERCRED: a peer in the sandbox by its guest pid and ids (the
 * creator's for a socketpair, the listener's at listen() for a connecting
 * socket, the connector's at connect() for an accepted one); a peer outside
 * the sandbox (a host process listening on a socket file inside --root) as
 * pid 0, with the ids the host says, as Linux shows a process of a pid
 * namespace the reader cannot see.
 */
static void peercred_to_guest(struct sock *s, struct ucred *uc)
{
	if (s->has_peer) {
		*uc = (struct ucred){ s->peer.pid, s->peer.uid, s->peer.gid };
		return;
	}
	if (uc->pid == getpid())
		*uc = (struct ucred){ 0, sandbox.uid, sandbox.gid };
	else if (uc->pid)
		uc->pid = 0;
}

long sys_getsockopt(struct task *t, const long a[6])
{
	int level = (int)a[1], opt = (int)a[2], len;
	char val[OPT_MAX] __attribute__((aligned(8)));
	struct file *f;
	struct sock *s = sock_lookup(t, (int)a[0], &f);
	long r;

	if (!s)
		return f ? -ENOTSOCK : -EBADF;
	if ((r = opt_allowed(s, level, opt, false)))
		return r;
	if ((r = copy_from_guest(t->mm, &len, (uint64_t)a[4], sizeof(len))))
		return r;
	if (len < 0)
		return -EINVAL;
	socklen_t hl = (socklen_t)MIN(len, OPT_MAX);
	memset(val, 0, sizeof(val));
	if (getsockopt(f->host_fd, level, opt, val, &hl) < 0)
		return neg_errno();
	if (level == SOL_SOCKET && opt == SO_PEERCRED && hl == sizeof(struct ucred))
		peercred_to_guest(s, (struct ucred *)val);
	if ((r = copy_to_guest(t->mm, (uint64_t)a[3], val, MIN(hl, (socklen_t)len))))
		return r;
	int out = (int)hl;
	return copy_to_guest(t->mm, (uint64_t)a[4], &out, sizeof(out));
}
