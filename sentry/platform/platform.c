// SPDX-License-Identifier: GPL-2.0
/* Choosing a platform: by name, or "auto" = the first usable in preference order. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pvx/log.h"
#include "platform.h"

/* Preference order for "auto": fastest first. */
static const struct platform_ops *const platforms[] = {
	&platform_vmexec,
	&platform_seccomp,
	&platform_ptrace,
};

/* `pvx platforms`: which platforms this kernel can run, in "auto" order. */
int platform_list(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(platforms); i++) {
		long r = platforms[i]->probe();
		printf("%-8s %s%s\n", platforms[i]->name, r ? "unavailable: " : "available",
		       r ? strerror((int)-r) : "");
	}
	return 0;
}

const struct platform_ops *platform_select(const char *name)
{
	bool any = !strcmp(name, "auto");

	for (size_t i = 0; i < ARRAY_SIZE(platforms); i++) {
		const struct platform_ops *p = platforms[i];
		if (!any && strcmp(name, p->name))
			continue;
		long r = p->probe();
		if (!r)
			return p;
		if (!any) {
			pr_err("platform %s is not usable on this kernel: %s", name, strerror((int)-r));
			return NULL;
		}
	}
	if (any)
		pr_err("no usable platform");
	else
		pr_err("unknown platform '%s' (known: auto, vmexec, seccomp, ptrace)", name);
	return NULL;
}

void ctx_link(struct addr_space *as, struct platform_ctx *ctx, bool own)
{
	ctx->as = as;
	ctx->next = as->ctxs;
	as->ctxs = ctx;
	if (own) {
		ctx->owner = pthread_self();
		ctx->owned = true;
	}
}

void ctx_unlink(struct platform_ctx *ctx)
{
	for (struct platform_ctx **p = &ctx->as->ctxs; *p; p = &(*p)->next)
		if (*p == ctx) {
			*p = ctx->next;
			break;
		}
}

struct platform_ctx *ctx_self(struct addr_space *as)
{
	pthread_t me = pthread_self();

	for (struct platform_ctx *c = as ? as->ctxs : NULL; c; c = c->next)
		if (c->owned && pthread_equal(c->owner, me))
			return c;
	return NULL;
}

static int live_hint;	/* task threads still running: the kernel stores it, the platforms read it */

/* See platform.h: seccomp stops spinning once more than one task runs. */
int sentry_live_hint(void)
{
	return __atomic_load_n(&live_hint, __ATOMIC_RELAXED);
}

/* The kernel's count of running task threads changed (sentry/kernel/kernel.c). */
void platform_set_live_hint(int threads)
{
	__atomic_store_n(&live_hint, threads, __ATOMIC_RELAXED);
}

/*
 * ptrace and seccomp: signal the context's own stub thread (a signal for the
 * process could land in any of them). vmexec stubs block every signal: the
 * caller kicks the sentry thread instead. Queued with a siginfo of our own,
 * not tgkill(2)'s: that one names the sender, and the seccomp stub's signal
 * frame is memory the guest reads (no host pid for the guest).
 */
void ctx_kick(struct platform_ctx *ctx, int sig)
{
	siginfo_t si;

	if (!ctx || ctx->tid <= 0)
		return;
	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	syscall(SYS_rt_tgsigqueueinfo, ctx->as->pid, ctx->tid, sig, &si);
}
