/* sec_stub_fdsteal: a hostile guest that steals the file descriptors pvx passes to its seccomp stub for
 * file mappings (issue 11, finding 5): a thread keeps calling recvmsg(2) on the stub's socket through the
 * stub's own syscall instruction while the main thread maps a file again and again. pvx must not wait for
 * an fd that never comes (it used to block for good, holding its lock). usage: sec_stub_fdsteal FILE
 * The main thread ends with exit status 7 whatever its mappings did. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "guest.h"
#include "stubgadget.h"

static volatile int stop;
static uintptr_t gadget;

static void *thief(void *arg)
{
	(void)arg;
	char byte, cbuf[64];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf };
	while (!stop) {
		m.msg_controllen = sizeof(cbuf);
		stub_call(gadget, SYS_recvmsg, 3, (long)&m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, 0, 0, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct stub_gadgets g;
	pthread_t t;

	if (argc < 2)
		return 2;
	probe_init();
	find_gadgets(&g);
	gadget = gadget_nonzero(&g);
	if (!gadget) {
		say("no gadget\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 3;
	pthread_create(&t, NULL, thief, NULL);
	int ok = 0;
	for (int i = 0; i < 300; i++) {
		void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			ok++;
			munmap(p, 4096);
		}
	}
	say("mapped %s\n", ok ? "some" : "none");
	_exit(7);
}
