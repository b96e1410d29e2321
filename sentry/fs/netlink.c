// SPDX-License-Identifier: GPL-2.0
/*
 * AF_NETLINK sockets, NETLINK_ROUTE only, read-only: a guest may ask the
 * sandbox's network about its links, addresses, routes, neighbours, rules
 * and per-device settings (what Go's net.Interfaces, getifaddrs and `ip
 * addr` do), and nothing else. The host socket is the sentry's, which on
 * --network=host (or as root) could change the host's network, so every
 * message the guest sends is checked here, in the sentry's own copy, the
 * way the host's netlink_rcv_skb and rtnetlink_rcv_msg walk it; a message
 * the host would act on must be one of the GET requests below, without an
 * attribute that names another network namespace (IFLA_NET_NS_PID/FD:
 * a pid or fd of the sentry's; *_TARGET_NETNSID). Messages go only to the
 * kernel (destination port 0, no multicast groups).
 *
 * The port id is the guest's: the sentry binds the socket itself as Linux's
 * netlink_autobind would (the guest's tgid, else a random negative id), so
 * the host never picks the sentry's host pid, and the replies' nlmsg_pid
 * and getsockname show what the guest expects.
 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/random.h>

#include "pvx/socket.h"
#include "pvx/task.h"

#ifndef IFLA_TARGET_NETNSID
#define IFLA_TARGET_NETNSID 46
#endif
#ifndef IFA_TARGET_NETNSID
#define IFA_TARGET_NETNSID 10
#endif
#define NLA_TYPE_BITS 0x3fff	/* NLA_TYPE_MASK: without NLA_F_NESTED and NLA_F_NET_BYTEORDER */

/* The GET requests a guest may make; other kinds of GET: EOPNOTSUPP. */
static const unsigned short route_gets[] = {
	RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETNEIGH, RTM_GETRULE, RTM_GETNETCONF,
};

/* Does the attribute stream at p (len bytes) hold one of the types in bad (nla_for_each_attr's walk)? */
static bool has_attr(const unsigned char *p, size_t len, const unsigned short *bad, size_t nbad)
{
	while (len >= sizeof(struct nlattr)) {
		struct nlattr a;
		memcpy(&a, p, sizeof(a));
		if (a.nla_len < sizeof(a) || a.nla_len > len)
			return false;
		for (size_t i = 0; i < nbad; i++)
			if ((a.nla_type & NLA_TYPE_BITS) == bad[i])
				return true;
		size_t step = NLA_ALIGN(a.nla_len);
		if (step >= len)
			return false;
		p += step;
		len -= step;
	}
	return false;
}

/*
 * Does a GET request name another network namespace? The host parses a
 * link request's attributes after a struct ifinfomsg, or after a struct
 * rtgenmsg when the payload is shorter (rtnl_valid_dump_ifinfo_req); an
 * address request's after a struct ifaddrmsg.
 */
static bool names_other_netns(const struct nlmsghdr *h, const unsigned char *payload, size_t len)
{
	static const unsigned short link_bad[] = { IFLA_NET_NS_PID, IFLA_NET_NS_FD, IFLA_TARGET_NETNSID };
	static const unsigned short addr_bad[] = { IFA_TARGET_NETNSID };
	size_t off;

	if (h->nlmsg_type == RTM_GETLINK) {
		off = len < sizeof(struct ifinfomsg) ? NLMSG_ALIGN(sizeof(struct rtgenmsg)) : sizeof(struct ifinfomsg);
		return off <= len && has_attr(payload + off, len - off, link_bad, ARRAY_SIZE(link_bad));
	}
	if (h->nlmsg_type == RTM_GETADDR) {
		off = NLMSG_ALIGN(sizeof(struct ifaddrmsg));
		return off <= len && has_attr(payload + off, len - off, addr_bad, ARRAY_SIZE(addr_bad));
	}
	return false;
}

/* 0 when the host may have this one message; else the guest's error. */
static long route_msg_ok(const struct nlmsghdr *h, const unsigned char *payload, size_t len)
{
	if (!(h->nlmsg_flags & NLM_F_REQUEST) || h->nlmsg_type < NLMSG_MIN_TYPE)
		return 0;	/* the host only acks it */
	if (h->nlmsg_type > RTM_MAX)
		return -EOPNOTSUPP;
	if (h->nlmsg_type < RTM_BASE || len < sizeof(struct rtgenmsg))
		return 0;	/* rtnetlink_rcv_msg ignores it */
	if (((h->nlmsg_type - RTM_BASE) & 3) != 2)
		return -EPERM;	/* NEW, DEL, SET: the answer without CAP_NET_ADMIN */
	for (size_t i = 0; i < ARRAY_SIZE(route_gets); i++)
		if (h->nlmsg_type == route_gets[i])
			return names_other_netns(h, payload, len) ? -EPERM : 0;
	return -EOPNOTSUPP;
}

long netlink_send_ok(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* netlink_rcv_skb's walk: a message shorter than a header, or longer than what is left, ends it */
	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
			return 0;
		long r = route_msg_ok(&h, p + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
		if (r)
			return r;
		size_t step = MIN((size_t)NLMSG_ALIGN(h.nlmsg_len), len);
		p += step;
		len -= step;
	}
	return 0;
}

long netlink_dest_ok(const struct sockaddr_storage *a, socklen_t len)
{
	const struct sockaddr_nl *n = (const struct sockaddr_nl *)a;

	if (len < sizeof(*n) || a->ss_family != AF_NETLINK)
		return 0;	/* the host's EINVAL */
	return n->nl_pid || n->nl_groups ? -EPERM : 0;
}

/* Bind f's host socket to port id, with the guest's multicast groups; -errno as the host's. */
static long bind_port(struct file *f, uint32_t port, uint32_t groups)
{
	struct sockaddr_nl n = { .nl_family = AF_NETLINK, .nl_pid = port, .nl_groups = groups };

	return bind(f->host_fd, (struct sockaddr *)&n, sizeof(n)) < 0 ? neg_errno() : 0;
}

/* netlink_autobind in the guest's terms: its tgid if free, else random ids below -4096. */
static long autobind(struct task *t, struct file *f, uint32_t groups)
{
	long r = bind_port(f, (uint32_t)sock_cred_of(t).pid, groups);

	for (int i = 0; r == -EADDRINUSE && i < 64; i++) {
		uint32_t x;
		if (getrandom(&x, sizeof(x), 0) != sizeof(x))
			return -EAGAIN;
		int32_t port = INT32_MIN + (int32_t)(x % (uint32_t)(-4096 - (int64_t)INT32_MIN));
		r = bind_port(f, (uint32_t)port, groups);
	}
	if (r == 0)
		((struct sock *)f->priv)->nl_bound = true;
	return r;
}

long netlink_bind(struct task *t, struct file *f, const struct sockaddr_storage *a, socklen_t len)
{
	const struct sockaddr_nl *n = (const struct sockaddr_nl *)a;
	struct sock *s = f->priv;

	if (len < sizeof(*n))
		return -EINVAL;
	if (a->ss_family != AF_NETLINK)
		return -EINVAL;
	if (!s->nl_bound && !n->nl_pid)
		return autobind(t, f, n->nl_groups);
	if (bind(f->host_fd, (const struct sockaddr *)a, len) < 0)
		return neg_errno();	/* a bound socket's other port id: EINVAL */
	s->nl_bound = true;
	return 0;
}

long netlink_ensure_bound(struct task *t, struct file *f)
{
	struct sock *s = f->priv;

	return s->nl_bound ? 0 : autobind(t, f, 0);
}
