/* sec_stub_prefetch: a hostile guest aimed at the seccomp stub's path prefetch (issue 16; stub/stub.c
 * prefetch, include/pvx/stub_abi.h): the trap handler copies a path call's path into the thread's shared
 * region, which every guest thread can write, and copies with stub_copy, whose faults the handler fixes up.
 *
 *   forge SECRET INO N  FORGERS threads keep writing into the main thread's region: pf_len (negative,
 *                       past the buffer, huge), pf_addr (the main thread's path, NULL, the stub's range),
 *                       the second string's pf_len2 and pf_addr2 the same way, and pf_buf (no NUL at all,
 *                       or SECRET, the host path of a file outside the root whose inode is INO, at the
 *                       start and where a second string would follow the forged first), while the main
 *                       thread stats "/marker" N times. A forged
 *                       string may be taken for the guest's own path (the guest could have written it
 *                       there itself), but it is still a path inside the root: no stat may answer with
 *                       INO. Prints "taken N" (stats that saw a forged path: informative) and exits 7
 *                       when no stat escaped and every error was one a stat can give.
 *   forgeout N          FORGERS threads keep writing the main thread's copy-out fields instead (out_fault
 *                       set, out_len past the buffer or huge, out_addr in the stub's text, its regions,
 *                       NULL) while it stats /etc/passwd N times. The guest may confuse itself (a forged
 *                       fault makes pvx answer the previous trap again, as a forged trap would) but pvx
 *                       must neither crash nor hang, and no stub range is written. Prints "wrong N" and
 *                       exits 7.
 *   forgein FILE N      FORGERS threads keep writing the main thread's input prefetch (in_addr: its buffer,
 *                       inside it, NULL, the stub's range, huge; in_len: 0, past the buffer, huge; in_buf: 'F's)
 *                       while it writes 64 bytes of 'R' to FILE, reads them back and blocks an empty signal
 *                       set, N times. Forged bytes may be taken for the guest's own (they are in its own
 *                       memory), but every byte the file gets is one of the guest's: 'R', 'F' or the region's
 *                       zeros, never one from elsewhere. Prints "forged N odd M" and exits 7 when M is 0.
 *   jump                call stub_copy (found by its bytes in the stub's text) from guest code with an
 *                       unmapped source: the guest's own fault, so a SIGSEGV at that address, not a
 *                       silent "1" from the handler's fixup. Exits 7 when so; 3 when stub_copy is not
 *                       there (natively, or another platform).
 *   altstack            fault (a load from an unmapped page) with the stack pointer inside the main
 *                       thread's own altstack: a fault nested in the trap handler, as far as the stub can
 *                       tell, and not one of stub_copy's; the stub ends the process rather than report
 *                       registers it cannot vouch for (killed, no hang); natively status 2 as above.
 * Natively the regions are not there: "no shared region", status 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"
#include "stubgadget.h"

/* struct stub_shared (include/pvx/stub_abi.h): found by the layout's own numbers below */
#define PF_ADDR_OFF 472
#define PF_BUF_LEN 2032		/* pf_buf at +16; then pf_addr2, pf_len2 (the second string, after the first's NUL) */
#define PF_ADDR2_OFF 2520
#define OUT_ADDR_OFF 2536	/* out_addr; out_len +8, out_fault +12 */
#define IN_ADDR_OFF 0x1000	/* in_addr; in_len +8, in_buf +16 (STUB_IN_OFF) */
#define IN_MAX (0x3000 - 16)	/* STUB_IN_MAX */
#define FORGERS 3

static const char *secret;
static volatile int stop;
static char path[] = "/marker";

static void *forger(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char *r = (char *)STUB_SHARED;
	while (!stop) {
		seed = seed * 1103515245 + 12345;
		uint64_t addrs[] = { (uint64_t)path, 0, STUB_SHARED, STUB_BASE - 8, (uint64_t)path + 1 };
		int32_t lens[] = { -5, 0, (int32_t)strlen(secret), 2047, 2048, 100000, INT32_MAX, (int32_t)strlen(path) };
		int32_t len1 = lens[(seed >> 12) % 8];
		*(volatile uint64_t *)(r + PF_ADDR_OFF) = addrs[(seed >> 8) % 5];
		*(volatile int32_t *)(r + PF_ADDR_OFF + 8) = len1;
		char *buf = r + PF_ADDR_OFF + 16;
		if ((seed >> 16) & 1)
			memset(buf, 'x', PF_BUF_LEN);	/* no NUL anywhere */
		else
			strcpy(buf, secret);
		/* the second string: at the main thread's path too, its length past the buffer, negative, huge,
		 * and the secret where a second string would be after the forged first */
		*(volatile uint64_t *)(r + PF_ADDR2_OFF) = addrs[(seed >> 18) % 5];
		*(volatile int32_t *)(r + PF_ADDR2_OFF + 8) = lens[(seed >> 22) % 8];
		if (((seed >> 26) & 1) && len1 >= 0 && (size_t)len1 + 1 + strlen(secret) < PF_BUF_LEN)
			strcpy(buf + len1 + 1, secret);
	}
	return NULL;
}

static void *out_forger(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char *r = (char *)STUB_SHARED;
	while (!stop) {
		seed = seed * 1103515245 + 12345;
		uint64_t addrs[] = { 0, STUB_TEXT, STUB_SHARED + 16, STUB_BASE - 8, STUB_BASE + 0x80000 };
		uint32_t lens[] = { 0, 144, 1536, 1537, UINT32_MAX };
		*(volatile uint64_t *)(r + OUT_ADDR_OFF) = addrs[(seed >> 8) % 5];
		*(volatile uint32_t *)(r + OUT_ADDR_OFF + 8) = lens[(seed >> 12) % 5];
		*(volatile uint32_t *)(r + OUT_ADDR_OFF + 12) = 1;
	}
	return NULL;
}

static char data[256] __attribute__((aligned(64)));

static void *in_forger(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char *r = (char *)STUB_SHARED;
	while (!stop) {
		seed = seed * 1103515245 + 12345;
		/* ... and one that puts the buffer's bytes at the top of the altstack (the trap's signal frame) */
		uint64_t addrs[] = { (uint64_t)data, (uint64_t)data - 10, (uint64_t)data + 100, 0, STUB_SHARED,
				     STUB_BASE - 8, 1UL << 63, (uint64_t)data - (0x40f00 - 0x800 - IN_ADDR_OFF - 16) };
		uint32_t lens[] = { 0, 1, 64, 100, IN_MAX, IN_MAX + 1, 0x80000000u, UINT32_MAX };
		*(volatile uint64_t *)(r + IN_ADDR_OFF) = addrs[(seed >> 8) % 8];
		*(volatile uint32_t *)(r + IN_ADDR_OFF + 8) = lens[(seed >> 12) % 8];
		memset(r + IN_ADDR_OFF + 16 + ((seed >> 16) % 64), 'F', 128);
	}
	return NULL;
}

static sigjmp_buf jb;
static volatile uintptr_t fault_addr;
static volatile int fault_sig;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	fault_sig = sig;
	fault_addr = (uintptr_t)si->si_addr;
	siglongjmp(jb, 1);
}

/* stub_copy (stub/stub.c): mov %rdx,%rcx; rep movsb; xor %eax,%eax; ret; mov $1,%eax; ret */
static uintptr_t find_stub_copy(void)
{
	static const unsigned char pat[] = "\x48\x89\xd1\xf3\xa4\x31\xc0\xc3\xb8\x01\x00\x00\x00\xc3";
	struct stub_gadgets g;

	find_gadgets(&g);
	for (uintptr_t a = STUB_TEXT; a + sizeof(pat) - 1 <= g.end; a++)
		if (!memcmp((const void *)a, pat, sizeof(pat) - 1))
			return a;
	return 0;
}

int main(int argc, char **argv)
{
	probe_init();
	if (!readable(STUB_SHARED)) {
		say("no shared region\n");
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "jump")) {
		uintptr_t copy = find_stub_copy();
		if (!copy) {
			say("no stub_copy\n");
			return 3;
		}
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fault;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigaction(SIGSEGV, &sa, NULL);
		char dst[64];
		uintptr_t bad = 0x10000;	/* PVX_GUEST_MIN: never mapped here */
		long r = -1;
		if (!sigsetjmp(jb, 1))
			r = stub_call(copy, 0, (long)dst, (long)bad, 16, 0, 0, 0);
		printf("returned %ld, signal %d at %#lx\n", r, fault_sig, (unsigned long)fault_addr);
		return fault_sig == SIGSEGV && fault_addr == bad ? 7 : 1;
	}
	if (argc == 2 && !strcmp(argv[1], "altstack")) {
		say("faulting\n");
		__asm__ volatile("mov %%rsp, %%rbx\n\t"
				 "mov %0, %%rsp\n\t"
				 "mov 0x10000, %%rax\n\t"
				 "mov %%rbx, %%rsp"
				 :
				 : "r"(STUB_SHARED + 0x20000)
				 : "rax", "rbx", "memory");
		say("survived\n");
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "forgeout")) {
		pthread_t t[FORGERS];
		int n = atoi(argv[2]), wrong = 0;
		struct stat want, st;
		if (stat("/etc/passwd", &want))
			return 1;
		for (int i = 0; i < FORGERS; i++)
			pthread_create(&t[i], NULL, out_forger, (void *)(uintptr_t)(i + 1));
		for (int i = 0; i < n; i++)
			wrong += stat("/etc/passwd", &st) != 0 || st.st_ino != want.st_ino;
		stop = 1;
		for (int i = 0; i < FORGERS; i++)
			pthread_join(t[i], NULL);
		printf("wrong %d\n", wrong);
		return 7;
	}
	if (argc == 4 && !strcmp(argv[1], "forgein")) {
		/* pwrite 64 bytes of 'R' (and sigprocmask an empty set) N times; read what the file got back */
		pthread_t t[FORGERS];
		int n = atoi(argv[3]), forged = 0, odd = 0;
		int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
		sigset_t none;
		if (fd < 0)
			return 1;
		sigemptyset(&none);
		memset(data, 'R', sizeof(data));
		for (int i = 0; i < FORGERS; i++)
			pthread_create(&t[i], NULL, in_forger, (void *)(uintptr_t)(i + 1));
		for (int i = 0; i < n; i++) {
			char got[64];
			if (pwrite(fd, data, 64, 0) != 64 || pread(fd, got, 64, 0) != 64) {
				odd++;
				printf("pwrite or pread: %s\n", strerror(errno));
				continue;
			}
			int f = 0;
			for (int j = 0; j < 64; j++) {
				f |= got[j] == 'F';
				odd += got[j] != 'R' && got[j] != 'F' && got[j] != 0;
			}
			forged += f;
			sigprocmask(SIG_BLOCK, &none, NULL);
		}
		stop = 1;
		for (int i = 0; i < FORGERS; i++)
			pthread_join(t[i], NULL);
		printf("forged %d odd %d\n", forged, odd);
		return odd ? 1 : 7;
	}
	if (argc != 5 || strcmp(argv[1], "forge"))
		return 2;
	secret = argv[2];
	unsigned long ino = strtoul(argv[3], NULL, 0);
	int n = atoi(argv[4]), escaped = 0, taken = 0, odd = 0;
	pthread_t t[FORGERS];
	for (int i = 0; i < FORGERS; i++)
		pthread_create(&t[i], NULL, forger, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(path, &st) == 0) {
			escaped += st.st_ino == ino;
		} else if (errno == ENOENT || errno == ENAMETOOLONG || errno == EFAULT) {
			taken++;
		} else {
			odd++;
			printf("stat: %s\n", strerror(errno));
		}
	}
	stop = 1;
	for (int i = 0; i < FORGERS; i++)
		pthread_join(t[i], NULL);
	printf("taken %d escaped %d odd %d\n", taken, escaped, odd);
	return !escaped && !odd ? 7 : 1;
}
