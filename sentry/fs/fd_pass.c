// SPDX-License-Identifier: GPL-2.0
/*
 * SCM_RIGHTS for files the host cannot carry: eventfds, timerfds, epolls,
 * signalfds, inotify instances and /proc's text files are the sentry's
 * (their state, or their host fd's meaning, is pvx's), so the host
 * message carries a token in their place: the write end of a new pipe,
 * whose read end stays here with the file. A receiver that gets a token
 * back gets that very file (one open file description, as on Linux).
 *
 * A token lives while the host holds its write end (in a queued message,
 * or a receiver's fd until it is swapped): when every write end is gone,
 * the read end sees POLLHUP and the entry and its file are let go. A
 * message never received (its socket closed) lets its tokens go the same
 * way. Entries are capped: past PVX_PASS_INFLIGHT in flight, a send is
 * ETOOMANYREFS, Linux's answer for too many fds in flight. Tokens are
 * told apart by the pipe's inode, which only the sentry's own pipes have;
 * a guest never holds a host fd, so it cannot make one.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "pvx/file.h"

struct token {
	struct file *file;	/* held while the token lives */
	int rfd;		/* the pipe's read end */
	dev_t dev;
	ino_t ino;
};

static struct token tokens[PVX_PASS_INFLIGHT];
static size_t ntokens;

/* Let go of every token whose write ends are all closed. */
static void sweep(void)
{
	struct pollfd p[PVX_PASS_INFLIGHT];

	for (size_t i = 0; i < ntokens; i++)
		p[i] = (struct pollfd){ tokens[i].rfd, POLLIN, 0 };
	if (!ntokens || poll(p, ntokens, 0) <= 0)
		return;
	for (size_t i = ntokens; i-- > 0;) {
		if (!(p[i].revents & (POLLHUP | POLLERR | POLLNVAL)))
			continue;
		close(tokens[i].rfd);
		file_put(tokens[i].file);
		tokens[i] = tokens[--ntokens];
	}
}

long pass_token(struct file *f)
{
	int pfd[2];
	struct stat st;

	sweep();
	if (ntokens == PVX_PASS_INFLIGHT)
		return -ETOOMANYREFS;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return neg_errno();
	if (fstat(pfd[0], &st) < 0) {
		long r = neg_errno();
		close(pfd[0]);
		close(pfd[1]);
		return r;
	}
	tokens[ntokens++] = (struct token){ file_get(f), pfd[0], st.st_dev, st.st_ino };
	return pfd[1];
}

struct file *pass_received(const struct stat *st)
{
	if (!S_ISFIFO(st->st_mode))
		return NULL;
	for (size_t i = 0; i < ntokens; i++)
		if (tokens[i].dev == st->st_dev && tokens[i].ino == st->st_ino)
			return file_get(tokens[i].file);
	return NULL;
}
