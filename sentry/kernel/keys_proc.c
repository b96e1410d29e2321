// SPDX-License-Identifier: GPL-2.0
/*
 * /proc's view of the sandbox's keys (security/keys/proc.c): /proc/keys
 * (the keys the reader may view, possessed or not), /proc/key-users (each
 * owner's counts against its quota) and /proc/sys/kernel/keys/ (the
 * quotas, read-only here).
 */
#include <stdlib.h>
#include <string.h>

#include "sentry/kernel/keys_int.h"

const char *const keys_sysctl_names[] = { "gc_delay", "maxbytes", "maxkeys", "persistent_keyring_expiry",
					  "root_maxbytes", "root_maxkeys", NULL };

/* proc_keys_show()'s expiry column: "perm", "expd", or the time left in its largest unit. */
static void print_expiry(FILE *out, const struct key *k, int64_t now)
{
	int64_t left = k->expiry - now;

	if (!k->expiry)
		fprintf(out, "%4s", "perm");
	else if (left <= 0)
		fprintf(out, "%4s", "expd");
	else if (left < 60)
		fprintf(out, "%3llds", (long long)left);
	else if (left < 60 * 60)
		fprintf(out, "%3lldm", (long long)(left / 60));
	else if (left < 60 * 60 * 24)
		fprintf(out, "%3lldh", (long long)(left / (60 * 60)));
	else if (left < 60 * 60 * 24 * 7)
		fprintf(out, "%3lldd", (long long)(left / (60 * 60 * 24)));
	else
		fprintf(out, "%3lldw", (long long)(left / (60 * 60 * 24 * 7)));
}

static void print_key(FILE *out, struct task *t, const struct key *k, int64_t now)
{
	bool pos = (k->perm & KP_POS(KP_VIEW)) && key_possessed(t, k);

	if (key_perm(k, pos, KP_VIEW))
		return;
	fprintf(out, "%08x %c%c%c%c%c%c%c %5d ", (unsigned)k->serial, k->flags & KF_NEGATIVE ? '-' : 'I',
		k->flags & KF_REVOKED ? 'R' : '-', '-', k->flags & KF_IN_QUOTA ? 'Q' : '-', '-',
		k->flags & KF_NEGATIVE ? 'N' : '-', k->flags & KF_INVALID ? 'i' : '-', k->refs);
	print_expiry(out, k, now);
	fprintf(out, " %08x %5d %5d %-9.9s %s", k->perm, (int)k->uid, (int)k->gid, k->type->name, k->desc);
	if (k->flags & (KF_NEGATIVE | KF_REVOKED))
		fprintf(out, "\n");
	else if (k->type->keyring)
		fprintf(out, k->nlinks ? ": %zu\n" : ": empty\n", k->nlinks);
	else
		fprintf(out, ": %zu\n", k->datalen);
}

static void print_user(unsigned uid, int usage, int nkeys, size_t nbytes, void *arg)
{
	fprintf(arg, "%5u: %5d %d/%d %d/%ld %zu/%ld\n", uid, usage, nkeys, nkeys, nkeys, key_maxkeys(uid), nbytes,
		key_maxbytes(uid));
}

/* The value of /proc/sys/kernel/keys/NAME: Linux's defaults, which are what keys.c enforces. */
static long print_sysctl(FILE *out, const char *name)
{
	if (!strcmp(name, "gc_delay"))
		fprintf(out, "300\n");
	else if (!strcmp(name, "maxbytes"))
		fprintf(out, "%ld\n", key_maxbytes(1));
	else if (!strcmp(name, "maxkeys"))
		fprintf(out, "%ld\n", key_maxkeys(1));
	else if (!strcmp(name, "persistent_keyring_expiry"))
		return -ENOENT;	/* no CONFIG_PERSISTENT_KEYRINGS */
	else if (!strcmp(name, "root_maxbytes"))
		fprintf(out, "%ld\n", key_maxbytes(0));
	else if (!strcmp(name, "root_maxkeys"))
		fprintf(out, "%ld\n", key_maxkeys(0));
	else
		return -ENOENT;
	return 0;
}

long keys_proc_text(struct task *t, const char *rel, char **text, size_t *len)
{
	FILE *out = open_memstream(text, len);
	long r = 0;

	if (!out)
		return -ENOMEM;
	if (!strcmp(rel, "/keys")) {
		int64_t now = key_now();
		for (struct key *k = key_next(NULL); k; k = key_next(k))
			print_key(out, t, k, now);
	} else if (!strcmp(rel, "/key-users")) {
		key_users_each(print_user, out);
	} else if (!strncmp(rel, "/sys/kernel/keys/", 17)) {
		r = print_sysctl(out, rel + 17);
	} else {
		r = -ENOENT;
	}
	if (fclose(out))
		r = r ? r : -ENOMEM;
	if (r) {
		free(*text);
		*text = NULL;
	}
	return r;
}
