/*
 * AF_NETLINK route sockets (issue 13): what Go's net.Interfaces, getifaddrs and `ip addr` ask.
 *   lo       dump links and addresses and print lo's (the same natively and in the sandbox's network),
 *            check the replies' port id and sequence, and getifaddrs' view of lo
 *   links    every link's name, one per line (the sandbox's network has only lo)
 *   hostile  what pvx refuses: requests that change the network, other namespaces, destinations other
 *            than the kernel, other netlink protocols (sandbox-only expectations: natively, as root,
 *            some of them would succeed)
 *   add A    ask for IPv4 address A/8 on lo (RTM_NEWADDR) by write, send, sendmsg and sendmmsg; print
 *            what each returned and any ack's error
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "evnet.h"

/* Linux's netlink ABI (linux/netlink.h, linux/rtnetlink.h), which musl's headers do not have. */
struct sockaddr_nl {
	sa_family_t nl_family;
	unsigned short nl_pad;
	uint32_t nl_pid, nl_groups;
};
struct nlmsghdr {
	uint32_t nlmsg_len;
	uint16_t nlmsg_type, nlmsg_flags;
	uint32_t nlmsg_seq, nlmsg_pid;
};
struct nlmsgerr {
	int error;
	struct nlmsghdr msg;
};
struct rtattr {
	unsigned short rta_len, rta_type;
};
struct rtgenmsg {
	unsigned char rtgen_family;
};
struct ifinfomsg {
	unsigned char ifi_family, ifi_pad;
	unsigned short ifi_type;
	int ifi_index;
	unsigned ifi_flags, ifi_change;
};
struct ifaddrmsg {
	uint8_t ifa_family, ifa_prefixlen, ifa_flags, ifa_scope;
	uint32_t ifa_index;
};
struct rtmsg {
	unsigned char rtm_family, rtm_dst_len, rtm_src_len, rtm_tos, rtm_table, rtm_protocol, rtm_scope, rtm_type;
	unsigned rtm_flags;
};
#define NETLINK_ROUTE 0
#define NETLINK_SOCK_DIAG 4
#define NETLINK_AUDIT 9
#define NETLINK_KOBJECT_UEVENT 15
#define NETLINK_GENERIC 16
#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#define NETLINK_LISTEN_ALL_NSID 8
#define NLM_F_REQUEST 0x01
#define NLM_F_ACK 0x04
#define NLM_F_DUMP 0x300
#define NLM_F_EXCL 0x200
#define NLM_F_CREATE 0x400
#define NLMSG_ERROR 2
#define NLMSG_DONE 3
#define NLMSG_ALIGN(len) (((len) + 3U) & ~3U)
#define NLMSG_HDRLEN ((int)NLMSG_ALIGN(sizeof(struct nlmsghdr)))
#define NLMSG_LENGTH(len) ((len) + NLMSG_HDRLEN)
#define NLMSG_DATA(h) ((void *)((char *)(h) + NLMSG_HDRLEN))
#define NLMSG_NEXT(h, len) ((len) -= NLMSG_ALIGN((h)->nlmsg_len), \
			    (struct nlmsghdr *)((char *)(h) + NLMSG_ALIGN((h)->nlmsg_len)))
#define NLMSG_OK(h, len) ((len) >= (int)sizeof(struct nlmsghdr) && (h)->nlmsg_len >= sizeof(struct nlmsghdr) && \
			  (h)->nlmsg_len <= (len))
#define RTA_ALIGN(len) (((len) + 3U) & ~3U)
#define RTA_LENGTH(len) (RTA_ALIGN(sizeof(struct rtattr)) + (len))
#define RTA_DATA(a) ((void *)((char *)(a) + RTA_LENGTH(0)))
#define RTA_OK(a, len) ((len) >= (int)sizeof(struct rtattr) && (a)->rta_len >= sizeof(struct rtattr) && \
			(a)->rta_len <= (len))
#define RTA_NEXT(a, len) ((len) -= RTA_ALIGN((a)->rta_len), (struct rtattr *)((char *)(a) + RTA_ALIGN((a)->rta_len)))
#define IFLA_RTA(i) ((struct rtattr *)((char *)(i) + NLMSG_ALIGN(sizeof(struct ifinfomsg))))
#define IFLA_PAYLOAD(h) ((h)->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct ifinfomsg))))
#define IFA_RTA(i) ((struct rtattr *)((char *)(i) + NLMSG_ALIGN(sizeof(struct ifaddrmsg))))
#define IFA_PAYLOAD(h) ((h)->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct ifaddrmsg))))
enum { RTM_NEWLINK = 16, RTM_GETLINK = 18, RTM_SETLINK = 19, RTM_NEWADDR = 20, RTM_DELADDR = 21, RTM_GETADDR = 22,
       RTM_NEWROUTE = 24, RTM_GETNSID = 90 };
#define IFLA_IFNAME 3
#define IFLA_NET_NS_PID 19
#define IFLA_NET_NS_FD 28
#define IFLA_TARGET_NETNSID 46
#define IFA_ADDRESS 1
#define IFA_LOCAL 2
#define IFA_TARGET_NETNSID 10
#define RTMGRP_LINK 1
#define NLA_F_NESTED 0x8000

static char rbuf[1 << 16] __attribute__((aligned(8)));

static int nl_open(void)
{
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0) {
		say("socket: %s\n", rs(s));
		exit(1);
	}
	return s;
}

/* A request: header, a family header of hlen bytes (zeroed, family in its first byte), attrs appended by the caller. */
struct req {
	struct nlmsghdr h;
	unsigned char body[256];
};

static void req_init(struct req *q, unsigned short type, unsigned short flags, size_t hlen, unsigned char family,
		     unsigned seq)
{
	memset(q, 0, sizeof(*q));
	q->h.nlmsg_len = (unsigned)NLMSG_LENGTH(hlen);
	q->h.nlmsg_type = type;
	q->h.nlmsg_flags = (unsigned short)(NLM_F_REQUEST | flags);
	q->h.nlmsg_seq = seq;
	q->body[0] = family;
}

static void req_attr(struct req *q, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)q + NLMSG_ALIGN(q->h.nlmsg_len));
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	q->h.nlmsg_len = (unsigned)(NLMSG_ALIGN(q->h.nlmsg_len) + RTA_ALIGN(a->rta_len));
}

static uint32_t port_of(int s)
{
	struct sockaddr_nl a;
	socklen_t l = sizeof(a);
	memset(&a, 0, sizeof(a));
	if (getsockname(s, (struct sockaddr *)&a, &l) < 0)
		return 0;
	return a.nl_pid;
}

static int lo_index;
static int ok_port = 1, ok_seq = 1, ok_done;

/* Read one dump's replies, calling fn for each message until NLMSG_DONE (or an error). */
static void dump(int s, unsigned seq, void (*fn)(struct nlmsghdr *))
{
	uint32_t port = port_of(s);
	for (;;) {
		struct sockaddr_nl from;
		struct iovec iov = { rbuf, sizeof(rbuf) };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(s, &m, 0);
		if (n <= 0) {
			say("recvmsg: %s\n", rs(n));
			return;
		}
		if (from.nl_pid != 0)
			say("a reply not from the kernel: %u\n", from.nl_pid);
		for (struct nlmsghdr *h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (int)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_pid != port)
				ok_port = 0;
			if (h->nlmsg_seq != seq)
				ok_seq = 0;
			if (h->nlmsg_type == NLMSG_DONE) {
				ok_done = 1;
				return;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				say("dump error %d\n", ((struct nlmsgerr *)NLMSG_DATA(h))->error);
				return;
			}
			fn(h);
		}
	}
}

static void show_link_lo(struct nlmsghdr *h)
{
	struct ifinfomsg *i = NLMSG_DATA(h);
	int len = (int)IFLA_PAYLOAD(h);
	for (struct rtattr *a = IFLA_RTA(i); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == IFLA_IFNAME && !strcmp(RTA_DATA(a), "lo")) {
			lo_index = i->ifi_index;
			say("link lo: index %d, UP %s, LOOPBACK %s\n", i->ifi_index, i->ifi_flags & IFF_UP ? "yes" : "no",
			    i->ifi_flags & IFF_LOOPBACK ? "yes" : "no");
		}
	}
}

static void show_link_name(struct nlmsghdr *h)
{
	struct ifinfomsg *i = NLMSG_DATA(h);
	int len = (int)IFLA_PAYLOAD(h);
	for (struct rtattr *a = IFLA_RTA(i); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFLA_IFNAME)
			say("%s\n", (char *)RTA_DATA(a));
}

static void show_addr_lo(struct nlmsghdr *h)
{
	struct ifaddrmsg *i = NLMSG_DATA(h);
	int len = (int)IFA_PAYLOAD(h);
	char txt[INET6_ADDRSTRLEN];
	if ((int)i->ifa_index != lo_index)
		return;
	for (struct rtattr *a = IFA_RTA(i); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == IFA_ADDRESS && inet_ntop(i->ifa_family, RTA_DATA(a), txt, sizeof(txt)))
			say("addr lo %s %s/%d\n", i->ifa_family == AF_INET ? "inet" : "inet6", txt, i->ifa_prefixlen);
}

static int dump_req(int s, unsigned short type, size_t hlen, unsigned seq)
{
	struct req q;
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	req_init(&q, type, NLM_F_DUMP, hlen, AF_UNSPEC, seq);
	return (int)sendto(s, &q, q.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k));
}

static int mode_lo(void)
{
	int s = nl_open();
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	say("bind port 0: %s\n", rs(bind(s, (struct sockaddr *)&a, sizeof(a))));
	uint32_t port = port_of(s);
	say("port id is nonzero: %s, is the pid: %s\n", port ? "yes" : "no", port == (uint32_t)getpid() ? "yes" : "no");
	say("GETLINK dump: %s\n", rs(dump_req(s, RTM_GETLINK, sizeof(struct rtgenmsg), 1) > 0));
	dump(s, 1, show_link_lo);
	/* an address dump with a full ifaddrmsg, as glibc's getifaddrs sends */
	say("GETADDR dump: %s\n", rs(dump_req(s, RTM_GETADDR, sizeof(struct ifaddrmsg), 2) > 0));
	dump(s, 2, show_addr_lo);
	say("replies carry the port id: %s, the sequence: %s, a DONE: %s\n", ok_port ? "yes" : "no",
	    ok_seq ? "yes" : "no", ok_done ? "yes" : "no");
	/* a second socket, unbound: its first send binds it (a port id other than the first's) */
	int s2 = nl_open();
	say("unbound socket's port: %u\n", port_of(s2));
	say("send on it: %s\n", rs(dump_req(s2, RTM_GETLINK, sizeof(struct rtgenmsg), 3) > 0));
	uint32_t p2 = port_of(s2);
	say("now bound, another port id: %s\n", p2 && p2 != port ? "yes" : "no");
	struct ifaddrs *ifa, *i;
	if (getifaddrs(&ifa) == 0) {
		for (i = ifa; i; i = i->ifa_next) {
			if (strcmp(i->ifa_name, "lo") || !i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			char txt[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, txt, sizeof(txt));
			say("getifaddrs lo inet %s\n", txt);
		}
		freeifaddrs(ifa);
	} else {
		say("getifaddrs: %s\n", rs(-1));
	}
	say("if_nametoindex lo = link index: %s\n", (int)if_nametoindex("lo") == lo_index ? "yes" : "no");
	return 0;
}

static int mode_links(void)
{
	int s = nl_open();
	dump_req(s, RTM_GETLINK, sizeof(struct rtgenmsg), 1);
	dump(s, 1, show_link_name);
	return 0;
}

/* Send q on a fresh socket; print what send returned and, for a request that went, the ack's error. */
static void try_req(const char *what, struct req *q)
{
	int s = nl_open();
	q->h.nlmsg_flags |= NLM_F_ACK;
	long r = send(s, q, q->h.nlmsg_len, 0);
	say("%s: send %s\n", what, rs(r));
	close(s);
}

static void addr_req(struct req *q, unsigned short type, const char *a4)
{
	req_init(q, type, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct ifaddrmsg), AF_INET, 9);
	struct ifaddrmsg *ifa = (struct ifaddrmsg *)q->body;
	ifa->ifa_prefixlen = 8;
	ifa->ifa_scope = 254;	/* RT_SCOPE_HOST, as `ip addr add` gives a loopback address */
	ifa->ifa_index = if_nametoindex("lo");
	struct in_addr in;
	inet_pton(AF_INET, a4, &in);
	req_attr(q, IFA_LOCAL, &in, sizeof(in));
	req_attr(q, IFA_ADDRESS, &in, sizeof(in));
}

static int mode_hostile(void)
{
	struct req q;
	/* requests that would change the network */
	addr_req(&q, RTM_NEWADDR, "127.0.0.98");
	try_req("RTM_NEWADDR", &q);
	addr_req(&q, RTM_DELADDR, "127.0.0.1");
	try_req("RTM_DELADDR", &q);
	req_init(&q, RTM_SETLINK, 0, sizeof(struct ifinfomsg), AF_UNSPEC, 9);
	((struct ifinfomsg *)q.body)->ifi_index = (int)if_nametoindex("lo");
	try_req("RTM_SETLINK", &q);
	req_init(&q, RTM_NEWROUTE, NLM_F_CREATE, sizeof(struct rtmsg), AF_INET, 9);
	try_req("RTM_NEWROUTE", &q);
	/* a GET first, then a change, in one send: nothing of it goes */
	{
		char two[2 * sizeof(struct req)];
		struct req g;
		req_init(&g, RTM_GETLINK, NLM_F_DUMP, sizeof(struct rtgenmsg), AF_UNSPEC, 1);
		addr_req(&q, RTM_NEWADDR, "127.0.0.98");
		size_t l1 = NLMSG_ALIGN(g.h.nlmsg_len);
		memcpy(two, &g, g.h.nlmsg_len);
		memcpy(two + l1, &q, q.h.nlmsg_len);
		int s = nl_open();
		say("GETLINK then NEWADDR in one send: %s\n", rs(send(s, two, l1 + q.h.nlmsg_len, 0)));
		close(s);
	}
	/* GETs that name another network namespace */
	int v = 1;
	req_init(&q, RTM_GETLINK, NLM_F_DUMP, sizeof(struct ifinfomsg), AF_UNSPEC, 1);
	req_attr(&q, IFLA_TARGET_NETNSID, &v, sizeof(v));
	try_req("GETLINK dump, IFLA_TARGET_NETNSID after ifinfomsg", &q);
	req_init(&q, RTM_GETLINK, NLM_F_DUMP, sizeof(struct rtgenmsg), AF_UNSPEC, 1);
	req_attr(&q, IFLA_TARGET_NETNSID, &v, sizeof(v));
	try_req("GETLINK dump, IFLA_TARGET_NETNSID after rtgenmsg", &q);
	req_init(&q, RTM_GETLINK, 0, sizeof(struct ifinfomsg), AF_UNSPEC, 1);
	v = 3;
	req_attr(&q, IFLA_NET_NS_FD, &v, sizeof(v));
	try_req("GETLINK, IFLA_NET_NS_FD 3 (a sentry fd)", &q);
	req_init(&q, RTM_GETLINK, 0, sizeof(struct ifinfomsg), AF_UNSPEC, 1);
	v = 1;
	req_attr(&q, IFLA_NET_NS_PID | NLA_F_NESTED, &v, sizeof(v));
	try_req("GETLINK, IFLA_NET_NS_PID 1 with a flag bit", &q);
	req_init(&q, RTM_GETADDR, NLM_F_DUMP, sizeof(struct ifaddrmsg), AF_UNSPEC, 1);
	req_attr(&q, IFA_TARGET_NETNSID, &v, sizeof(v));
	try_req("GETADDR dump, IFA_TARGET_NETNSID", &q);
	req_init(&q, RTM_GETNSID, 0, sizeof(struct rtgenmsg), AF_UNSPEC, 1);
	try_req("RTM_GETNSID", &q);
	/* destinations other than the kernel */
	int s = nl_open();
	struct sockaddr_nl d = { .nl_family = AF_NETLINK, .nl_pid = 1 };
	req_init(&q, RTM_GETLINK, NLM_F_DUMP, sizeof(struct rtgenmsg), AF_UNSPEC, 1);
	say("sendto port 1: %s\n", rs(sendto(s, &q, q.h.nlmsg_len, 0, (struct sockaddr *)&d, sizeof(d))));
	d.nl_pid = 0;
	d.nl_groups = RTMGRP_LINK;
	say("sendto a multicast group: %s\n", rs(sendto(s, &q, q.h.nlmsg_len, 0, (struct sockaddr *)&d, sizeof(d))));
	d.nl_groups = 0;
	d.nl_pid = 1;
	say("connect port 1: %s\n", rs(connect(s, (struct sockaddr *)&d, sizeof(d))));
	say("NETLINK_LISTEN_ALL_NSID: %s\n", rs(setsockopt(s, SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, &v, sizeof(v))));
	/* malformed batches: the host ignores what follows a bad length, and so does the check */
	char junk[64];
	memset(junk, 0xff, sizeof(junk));
	say("a header with a length past the end: %s\n", rs(send(s, junk, sizeof(junk), 0)));
	/* splice into it: nothing reaches the socket without the sentry's copy */
	int p[2];
	if (pipe(p) == 0) {
		addr_req(&q, RTM_NEWADDR, "127.0.0.98");
		write(p[1], &q, q.h.nlmsg_len);
		say("splice a NEWADDR into it: %s\n", rs(splice(p[0], NULL, s, NULL, q.h.nlmsg_len, 0)));
	}
	/* other protocols and types */
	say("NETLINK_AUDIT: %s\n", rs(socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT)));
	say("NETLINK_KOBJECT_UEVENT: %s\n", rs(socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)));
	say("NETLINK_SOCK_DIAG: %s\n", rs(socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG)));
	say("NETLINK_GENERIC: %s\n", rs(socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)));
	say("SOCK_STREAM: %s\n", rs(socket(AF_NETLINK, SOCK_STREAM, NETLINK_ROUTE)));
	return 0;
}

/* The ack's error for the request just sent on s (0: done), or a note that none came. */
static void show_ack(int s)
{
	struct timeval tv = { 2, 0 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ssize_t n = recv(s, rbuf, sizeof(rbuf), 0);
	struct nlmsghdr *h = (struct nlmsghdr *)rbuf;
	if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) && h->nlmsg_type == NLMSG_ERROR)
		say("  ack error %d\n", ((struct nlmsgerr *)NLMSG_DATA(h))->error);
	else
		say("  no ack: %s\n", rs(n));
}

static int g_argc;
static char **g_argv;

static int mode_add(void)
{
	if (g_argc < 3)
		return 2;
	char **argv = g_argv + 2;
	struct req q;
	addr_req(&q, RTM_NEWADDR, argv[0]);
	q.h.nlmsg_flags |= NLM_F_ACK;
	int s = nl_open();
	long r = write(s, &q, q.h.nlmsg_len);
	say("write: %s\n", rs(r));
	if (r > 0)
		show_ack(s);
	r = send(s, &q, q.h.nlmsg_len, 0);
	say("send: %s\n", rs(r));
	if (r > 0)
		show_ack(s);
	struct iovec iov[2] = { { &q, 8 }, { (char *)&q + 8, q.h.nlmsg_len - 8 } };
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	r = sendmsg(s, &m, 0);
	say("sendmsg, two iovecs: %s\n", rs(r));
	if (r > 0)
		show_ack(s);
	struct mmsghdr mm = { .msg_hdr = m };
	r = sendmmsg(s, &mm, 1, 0);
	say("sendmmsg: %s\n", rs(r));
	if (r > 0)
		show_ack(s);
	r = writev(s, iov, 2);
	say("writev: %s\n", rs(r));
	if (r > 0)
		show_ack(s);
	return 0;
}

static const struct mode modes[] = {
	{ "lo", mode_lo },
	{ "links", mode_links },
	{ "hostile", mode_hostile },
	{ "add", mode_add },
};

int main(int argc, char **argv)
{
	g_argc = argc;
	g_argv = argv;
	return run_mode("net_netlink", modes, sizeof(modes) / sizeof(modes[0]), argc, argv);
}
