/* crash: dies of a synchronous fault. usage: crash segv|null-exec|ill|fpe|trap|bus FILE|wprot|stack|deep|abort|term|ignored
 * ("deep" does not crash: it uses 2 MiB of stack and exits 0)
 * The caller compares the exit status (128+signal) with the native run. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int limit = -1;

/* recurse with 4 KiB frames until depth `limit` (-1: forever) */
static int recurse(int n)
{
	volatile char pad[4096];
	pad[0] = (char)n;
	pad[4095] = (char)n;
	if (n == limit)
		return pad[0] + pad[4095];
	return recurse(n + 1) + pad[0];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "segv";
	printf("crashing: %s\n", mode);
	fflush(stdout);
	if (!strcmp(mode, "segv")) {
		*(volatile int *)0 = 1;
	} else if (!strcmp(mode, "null-exec")) {
		void (*f)(void) = (void (*)(void))8;
		f();
	} else if (!strcmp(mode, "ill")) {
		__asm__ volatile("ud2");
	} else if (!strcmp(mode, "fpe")) {
		volatile int a = 1, b = 0;
		printf("%d\n", a / b);
	} else if (!strcmp(mode, "trap")) {
		__asm__ volatile("int3");
	} else if (!strcmp(mode, "wprot")) {
		char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p[0] = 1;
	} else if (!strcmp(mode, "bus") && argc > 2) {
		/* touching a page of a file mapping wholly past EOF raises SIGBUS */
		int fd = open(argv[2], O_RDONLY);
		volatile char *p = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return 3;
		printf("%d\n", p[2 * 4096]);
	} else if (!strcmp(mode, "abort")) {
		abort();
	} else if (!strcmp(mode, "term")) {
		raise(SIGTERM);
	} else if (!strcmp(mode, "ignored")) {
		/* an ignored signal sent to oneself is discarded */
		signal(SIGUSR1, SIG_IGN);
		raise(SIGUSR1);
		printf("survived ignored SIGUSR1\n");
		return 0;
	} else if (!strcmp(mode, "deep")) {
		/* 2 MiB of stack must be usable (the default RLIMIT_STACK is 8 MiB) */
		limit = 512;
		printf("deep recursion: %s\n", recurse(1) != 0 ? "ok" : "?");
		return 0;
	} else if (!strcmp(mode, "stack")) {
		/* unbounded recursion: SIGSEGV at the stack limit */
		printf("%d\n", recurse(1));
	} else {
		fprintf(stderr, "unknown mode\n");
		return 2;
	}
	printf("survived?\n");
	return 0;
}
