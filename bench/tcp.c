/*
 * Loopback TCP benchmark guest (issue 13): a client and a server process
 * over 127.0.0.1 in one sandbox (its own network under --network=none).
 *   tcp stream MIB  ->  "tcp-stream BYTES MB_per_s": MIB MiB written in 64 KiB
 *                       chunks by the child, read by the parent
 *   tcp rr N        ->  "tcp-rr N round_trips_per_s": N 1-byte request and
 *                       reply pairs (TCP_NODELAY), the latency of a hand-off
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[64 << 10];

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A connected pair: *srv accepted by the parent, *cli connected (used by the child). */
static int pair(int *srv, int *cli)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	*cli = socket(AF_INET, SOCK_STREAM, 0);
	if (*cli < 0 || connect(*cli, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	*srv = accept(l, NULL, NULL);
	close(l);
	setsockopt(*srv, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return *srv < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	int srv, cli, st;

	if (argc < 3 || n <= 0 || pair(&srv, &cli))
		return 1;
	int stream = !strcmp(argv[1], "stream");
	long long total = stream ? (long long)n << 20 : n;
	double t0 = now();
	pid_t c = fork();
	if (c == 0) {
		close(srv);
		for (long long done = 0; done < total;) {
			ssize_t k = stream ? write(cli, buf, sizeof(buf) < total - done ? sizeof(buf) : total - done)
					   : (read(cli, buf, 1) == 1 ? write(cli, buf, 1) : -1);
			if (k <= 0)
				_exit(2);
			done += k;
		}
		_exit(0);
	}
	close(cli);
	for (long long done = 0; done < total;) {
		ssize_t k = stream ? read(srv, buf, sizeof(buf)) : (write(srv, "x", 1) == 1 ? read(srv, buf, 1) : -1);
		if (k <= 0)
			return 3;
		done += k;
	}
	double s = now() - t0;
	if (waitpid(c, &st, 0) != c || st)
		return 4;
	if (stream)
		printf("tcp-stream %lld %.1f\n", total, total / s / 1e6);
	else
		printf("tcp-rr %lld %.0f\n", total, total / s);
	return 0;
}
