/* futex_robust: robust futex lists (set_robust_list/get_robust_list) walked at exit. usage: futex_robust MODE
 *   thread   a PTHREAD_MUTEX_ROBUST held by a thread that exits: EOWNERDEAD, consistent, then 0
 *   waiter   main blocked in the lock while the owner thread exits: woken with EOWNERDEAD
 *   process  process-shared robust mutex in MAP_SHARED memory, the owner child _exits: EOWNERDEAD
 *   group    the lock is held by a second thread of the child when its main thread calls _exit (exit_group)
 *   killed   the child (lock held by its second thread) dies of SIGKILL from the parent
 *   exec     the child holds the lock and execs: execve walks the list (EOWNERDEAD)
 *   calls    get_robust_list: the head set_robust_list gave, len 24; ESRCH, EFAULT; set_robust_list EINVAL
 *   forged   a child hands the kernel forged lists (cycles, bad pointers, huge offsets, 3000 entries) and
 *            exits; the parent prints every word the walk may have touched */
#define _GNU_SOURCE
#include <errno.h>
#define FUTEX_WAITERS 0x80000000u
#define FUTEX_OWNER_DIED 0x40000000u
#define FUTEX_TID_MASK 0x3fffffffu
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t *mx;
static volatile int *flag;	/* shared: the owner holds the lock */

static const char *rname(int r)
{
	switch (r) {
	case 0: return "0";
	case EOWNERDEAD: return "EOWNERDEAD";
	case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
	case EBUSY: return "EBUSY";
	default: return strerror(r);
	}
}

static void *shared(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static void init_mutex(int pshared)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (pshared)
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(mx, &a);
}

/* Lock as the next owner: EOWNERDEAD, make it consistent, unlock, and lock once more. */
static void relock(void)
{
	int r = pthread_mutex_lock(mx);
	printf("lock after the owner died: %s\n", rname(r));
	if (r == EOWNERDEAD)
		printf("consistent: %s\n", rname(pthread_mutex_consistent(mx)));
	pthread_mutex_unlock(mx);
	printf("lock again: %s\n", rname(pthread_mutex_lock(mx)));
	pthread_mutex_unlock(mx);
}

static void *owner(void *arg)
{
	pthread_mutex_lock(mx);
	*flag = 1;
	if (arg)	/* hold it until the process ends */
		for (;;)
			pause();
	if (arg == NULL && flag[1])
		usleep(200000);	/* let main block in the lock first */
	return NULL;	/* exits holding the lock */
}

static void mode_thread(int waiter)
{
	pthread_t th;

	mx = malloc(sizeof(*mx));
	flag = calloc(2, sizeof(int));
	init_mutex(0);
	flag[1] = waiter;
	pthread_create(&th, NULL, owner, NULL);
	if (waiter) {
		while (!*flag)
			usleep(1000);
		relock();
		pthread_join(th, NULL);
		return;
	}
	pthread_join(th, NULL);
	relock();
}

/* The child takes the lock in a way of how, then ends as how says; the parent relocks. */
static void mode_process(const char *how, const char *self)
{
	char *mem = shared(4096);
	pthread_t th;

	mx = (pthread_mutex_t *)mem;
	flag = (volatile int *)(mem + 1024);
	init_mutex(1);
	pid_t pid = fork();
	if (pid == 0) {
		if (!strcmp(how, "process")) {
			pthread_mutex_lock(mx);
			_exit(0);
		}
		if (!strcmp(how, "exec")) {
			pthread_mutex_lock(mx);
			execl(self, self, "nothing", (char *)NULL);
			_exit(3);
		}
		pthread_create(&th, NULL, owner, (void *)1);
		while (!*flag)
			usleep(1000);
		if (!strcmp(how, "group"))
			_exit(0);
		for (;;)
			pause();
	}
	while (!*flag && strcmp(how, "process") && strcmp(how, "exec"))
		usleep(1000);
	if (!strcmp(how, "killed"))
		kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	relock();
}

struct head {
	uint64_t next;
	int64_t off;
	uint64_t pending;
};

static const char *ename(long r)
{
	return r == 0 ? "0" : errno == ESRCH ? "ESRCH" : errno == EFAULT ? "EFAULT" : errno == EINVAL ? "EINVAL"
		: errno == EPERM ? "EPERM" : strerror(errno);
}

static void mode_calls(void)
{
	struct head h = { 0 };
	uint64_t head = 1, len = 0;

	h.next = (uint64_t)&h;
	printf("set_robust_list(len 23): %s\n", ename(syscall(SYS_set_robust_list, &h, 23)));
	printf("set_robust_list: %s\n", ename(syscall(SYS_set_robust_list, &h, sizeof(h))));
	long r = syscall(SYS_get_robust_list, 0, &head, &len);
	printf("get_robust_list(0): %s, head is ours: %s, len %lu\n", ename(r), head == (uint64_t)&h ? "yes" : "no",
	       (unsigned long)len);
	head = 0;
	r = syscall(SYS_get_robust_list, getpid(), &head, &len);
	printf("get_robust_list(getpid()): %s, head is ours: %s\n", ename(r), head == (uint64_t)&h ? "yes" : "no");
	printf("get_robust_list(999999): %s\n", ename(syscall(SYS_get_robust_list, 999999, &head, &len)));
	printf("get_robust_list(-1): %s\n", ename(syscall(SYS_get_robust_list, -1, &head, &len)));
	printf("get_robust_list(bad head ptr): %s\n", ename(syscall(SYS_get_robust_list, 0, (void *)8, &len)));
	printf("get_robust_list(bad len ptr): %s\n", ename(syscall(SYS_get_robust_list, 0, &head, (void *)8)));
	printf("get_robust_list(kernel len ptr): %s\n",
	       ename(syscall(SYS_get_robust_list, 0, &head, (void *)0xffffffffff600000UL)));
	/* another process's: a child that set its own, stopped in pause */
	int p[2];
	if (pipe(p))
		exit(2);
	pid_t pid = fork();
	if (pid == 0) {
		static struct head ch;
		ch.next = (uint64_t)&ch;
		syscall(SYS_set_robust_list, &ch, sizeof(ch));
		uint64_t a = (uint64_t)&ch;
		if (write(p[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		for (;;)
			pause();
	}
	uint64_t want = 0;
	if (read(p[0], &want, sizeof(want)) != sizeof(want))
		exit(2);
	head = 0;
	r = syscall(SYS_get_robust_list, pid, &head, &len);
	printf("get_robust_list(child): %s, the child's head: %s\n", ename(r), head == want ? "yes" : "no");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("get_robust_list(reaped child): %s\n", ename(syscall(SYS_get_robust_list, pid, &head, &len)));
	syscall(SYS_set_robust_list, NULL, sizeof(h));	/* libc's own list is gone from here on */
}

/* Words the forged walk may touch, in MAP_SHARED memory the parent reads after the child's exit. */
#define NLONG 3000
struct arena {
	struct head h[8];
	uint64_t e[8][2];	/* entries: next, then the futex word at +8 */
	uint64_t chain[NLONG][2];
};

static void forged_child(struct arena *a, int which, uint32_t tid)
{
	struct head *h = &a->h[which];
	h->off = 8;
	h->next = (uint64_t)h;
	switch (which) {
	case 0:	/* one entry that points at itself */
		h->next = (uint64_t)a->e[0];
		a->e[0][0] = (uint64_t)a->e[0];
		a->e[0][1] = tid;
		break;
	case 1:	/* A -> B -> A, B with FUTEX_WAITERS, and a PI entry */
		h->next = (uint64_t)a->e[1];
		a->e[1][0] = (uint64_t)a->e[2] | 1;
		a->e[2][0] = (uint64_t)a->e[1];
		a->e[1][1] = tid;
		a->e[2][1] = tid | FUTEX_WAITERS;
		break;
	case 2:	/* first entry unmapped; the pending op is never reached */
		h->next = 0x1000;
		h->pending = (uint64_t)a->e[3];
		a->e[3][1] = tid;
		break;
	case 3:	/* a huge futex_offset: the walk ends at the first entry */
		h->next = (uint64_t)a->e[4];
		h->off = INT64_MAX;
		a->e[4][0] = (uint64_t)h;
		a->e[4][1] = tid;
		break;
	case 4:	/* an empty list with a pending op on a word we own, and a word another tid owns */
		h->pending = (uint64_t)a->e[5];
		a->e[5][1] = tid | FUTEX_WAITERS;
		a->e[6][1] = tid + 1;
		break;
	case 5:	/* 3000 entries, each word ours: only ROBUST_LIST_LIMIT (2048) are handled */
		h->next = (uint64_t)a->chain[0];
		for (int i = 0; i < NLONG; i++) {
			a->chain[i][0] = i + 1 < NLONG ? (uint64_t)a->chain[i + 1] : (uint64_t)h;
			a->chain[i][1] = tid;
		}
		break;
	case 6:	/* an unaligned word ends the walk before the next one */
		h->next = (uint64_t)a->e[7];
		h->off = 9;
		a->e[7][0] = (uint64_t)a->e[0];
		break;
	case 7:	/* the head itself unmapped, or in the kernel's half */
		syscall(SYS_set_robust_list, (void *)0xffffffffff600000UL, sizeof(*h));
		syscall(SYS_exit_group, 0);
	}
	syscall(SYS_set_robust_list, h, sizeof(*h));
	syscall(SYS_exit_group, 0);
}

static void mode_forged(void)
{
	struct arena *a = shared(sizeof(struct arena));

	for (int which = 0; which < 8; which++) {
		memset(a, 0, sizeof(*a));
		pid_t pid = fork();
		if (pid == 0)
			forged_child(a, which, (uint32_t)getpid());
		int st;
		waitpid(pid, &st, 0);
		uint32_t tid = (uint32_t)pid;
		printf("forged %d: status %#x", which, st);
		for (int i = 0; i < 8; i++) {
			uint32_t w = (uint32_t)a->e[i][1];
			printf(" %s", w == 0 ? "0" : w == tid ? "tid" : (w & FUTEX_TID_MASK) == tid ? "tid|W"
				   : w == (tid + 1) ? "tid+1" : "");
			if ((w & FUTEX_TID_MASK) != tid && w != tid + 1 && w)
				printf("%#x", w);
		}
		if (which == 5) {
			int died = 0, owned = 0;
			for (int i = 0; i < NLONG; i++) {
				died += (uint32_t)a->chain[i][1] == FUTEX_OWNER_DIED;
				owned += (uint32_t)a->chain[i][1] == tid;
			}
			printf(" chain: %d owner-died, %d still owned", died, owned);
		}
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	alarm(20);
	if (!strcmp(m, "nothing"))
		return 0;
	if (!strcmp(m, "thread"))
		mode_thread(0);
	else if (!strcmp(m, "waiter"))
		mode_thread(1);
	else if (!strcmp(m, "process") || !strcmp(m, "group") || !strcmp(m, "killed") || !strcmp(m, "exec"))
		mode_process(m, argv[0]);
	else if (!strcmp(m, "calls"))
		mode_calls();
	else if (!strcmp(m, "forged"))
		mode_forged();
	else
		return 2;
	return 0;
}
