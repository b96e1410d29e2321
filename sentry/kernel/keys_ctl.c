// SPDX-License-Identifier: GPL-2.0
/*
 * add_key(2), request_key(2) and keyctl(2)'s operations on the sandbox's
 * keys (security/keys/keyctl.c and request_key.c), after the syscall layer
 * has copied the guest's strings and payloads in. request_key has no
 * upcall: /sbin/request-key never runs, so a key that is not found with
 * callout information given is negatively instantiated for 60 seconds in
 * the destination keyring, as Linux leaves it when the helper fails, and
 * the call fails with ENOKEY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvx/kernel.h"
#include "sentry/kernel/keys_int.h"

#define KEY_REQKEY_DEFL_NO_CHANGE (-1)
#define KEY_REQKEY_DEFL_DEFAULT 0
#define KEY_REQKEY_DEFL_THREAD_KEYRING 1
#define KEY_REQKEY_DEFL_PROCESS_KEYRING 2
#define KEY_REQKEY_DEFL_SESSION_KEYRING 3
#define KEY_REQKEY_DEFL_USER_KEYRING 4
#define KEY_REQKEY_DEFL_USER_SESSION_KEYRING 5
#define KEY_REQKEY_DEFL_GROUP_KEYRING 6
#define KEY_REQKEY_DEFL_REQUESTOR_KEYRING 7
#define KEYCTL_MOVE_EXCL 1

/* user_preparse(): "datalen <= 0 || datalen > 32767 || !data" is EINVAL; a keyring takes no payload. */
static long preparse(const struct key_type *type, size_t plen)
{
	if (type->keyring)
		return plen ? -EINVAL : 0;
	return plen == 0 || plen > 32767 ? -EINVAL : 0;
}

/* key_create_or_update(): the checks, then an update of a matching key or a new key linked into ring. */
long keys_add(struct task *t, const char *typename, const char *desc, const void *payload, size_t plen, int ringid)
{
	struct key *ring, *k;
	bool pos;
	long r;

	if ((r = key_lookup(t, ringid, KL_CREATE, KP_WRITE, &ring, &pos)))
		return r;
	const struct key_type *type = key_type_lookup(typename);
	if (!type)
		return -ENODEV;
	if (!ring->type->keyring)
		return -ENOTDIR;
	if (type->needs_colon && desc && (!strchr(desc, ':') || desc[0] == ':'))
		return -EINVAL;	/* logon_vet_description() */
	if ((r = preparse(type, plen)))
		return r;
	if (!desc)
		return -EINVAL;
	/* find_key_to_update(): a key of the type and description in ring itself, if the type can update. */
	for (size_t i = 0; !type->keyring && i < ring->nlinks; i++) {
		k = ring->links[i];
		if (k->type != type || strcmp(k->desc, desc))
			continue;
		if (k->flags & (KF_REVOKED | KF_INVALID))
			break;	/* a new key takes its place in ring */
		if ((r = key_perm(k, pos, KP_WRITE)))
			return r;
		if ((r = key_validate(k)))
			return r;
		if ((r = key_set_payload(k, payload, plen)))
			return r;
		k->flags &= ~KF_NEGATIVE;	/* "updating a negative key positively instantiates it" */
		k->expiry = 0;
		return k->serial;
	}
	uint32_t perm = KP_POS(KP_VIEW | KP_SEARCH | KP_LINK | KP_SETATTR | KP_WRITE) | KP_USR(KP_VIEW);
	if (type->has_read)
		perm |= KP_POS(KP_READ);
	if ((r = key_alloc(type, desc, perm, false, &k)))
		return r;
	if ((!type->keyring && (r = key_set_payload(k, payload, plen))) || (r = keyring_link(ring, k))) {
		key_put(k);
		return r;
	}
	r = k->serial;
	key_put(k);	/* ring holds it now */
	return r;
}

/* construct_get_dest_keyring(): the keyring a new key goes to without a destination (t's jit default). */
static long default_dest(struct task *t, struct key **out)
{
	struct key *user, *session;
	long r;

	*out = NULL;
	switch (t->jit_keyring) {
	case KEY_REQKEY_DEFL_DEFAULT:
	case KEY_REQKEY_DEFL_REQUESTOR_KEYRING:
	case KEY_REQKEY_DEFL_THREAD_KEYRING:
		if ((*out = t->thread_keyring))
			return 0;
		/* fallthrough */
	case KEY_REQKEY_DEFL_PROCESS_KEYRING:
		if ((*out = t->proc->process_keyring))
			return 0;
		/* fallthrough */
	case KEY_REQKEY_DEFL_SESSION_KEYRING:
		if ((*out = t->session_keyring))
			return 0;
		/* fallthrough */
	case KEY_REQKEY_DEFL_USER_SESSION_KEYRING:
		if ((r = keys_user_keyrings(sandbox.uid, NULL, &session)))
			return r;
		*out = session;
		return 0;
	case KEY_REQKEY_DEFL_USER_KEYRING:
		if ((r = keys_user_keyrings(sandbox.uid, &user, NULL)))
			return r;
		*out = user;
		return 0;
	}
	return 0;
}

/*
 * request_key_and_link(): a usable key of type and description in t's
 * keyrings, linked into the destination; else, with callout information,
 * construct_key_and_link() without its upcall (see the top of the file).
 */
long keys_request(struct task *t, const char *typename, const char *desc, const char *callout, int destid)
{
	struct key *dest = NULL, *k;
	long r;

	if (destid && (r = key_lookup(t, destid, KL_CREATE, KP_WRITE, &dest, NULL)))
		return r;
	const struct key_type *type = key_type_lookup(typename);
	if (!type)
		return -ENOKEY;
	struct key_match m = { .type = type, .desc = desc, .state_check = true, .skip_expired = true };
	r = keys_search_task(t, &m, &k);
	if (!r) {
		if (dest && (r = keyring_link(dest, k)))
			return r;
		return k->serial;
	}
	if (r != -EAGAIN)
		return r;
	if (!callout)
		return -ENOKEY;
	if (type->keyring)
		return -EPERM;
	if (!dest) {
		if ((r = default_dest(t, &dest)))
			return r;
		if (dest && (r = key_perm(dest, true, KP_WRITE)))
			return r;	/* "Require Write permission on the keyring" */
	}
	uint32_t perm = KP_POS(KP_VIEW | KP_SEARCH | KP_LINK | KP_SETATTR | KP_WRITE) | KP_USR(KP_VIEW);
	if (type->has_read)
		perm |= KP_POS(KP_READ);
	if ((r = key_alloc(type, desc, perm, false, &k)))
		return r;
	k->flags |= KF_NEGATIVE;	/* key_negate_and_link(): what a failed /sbin/request-key leaves */
	k->reject_error = -ENOKEY;
	k->expiry = key_now() + KEY_NEGATIVE_TIMEOUT;
	r = dest ? keyring_link(dest, k) : 0;
	key_put(k);
	return r ? r : -ENOKEY;
}

long keyctl_get_keyring_id(struct task *t, int id, bool create)
{
	struct key *k;
	long r = key_lookup(t, id, create ? KL_CREATE : 0, KP_SEARCH, &k, NULL);

	return r ? r : k->serial;
}

/* join_session_keyring(): an anonymous session, or the named keyring (made if none may be joined). */
long keyctl_join_session(struct task *t, const char *name)
{
	struct key *k;
	long r;

	if (!name) {
		r = keys_new_session(t, NULL, KP_POS(KP_ALL) | KP_USR(KP_VIEW | KP_READ), &k);
		return r ? r : k->serial;
	}
	k = keyring_find_by_name(name);
	if (!k) {
		r = keys_new_session(t, name, KP_POS(KP_ALL) | KP_USR(KP_VIEW | KP_READ | KP_LINK), &k);
		return r ? r : k->serial;
	}
	if (k == t->session_keyring)
		return 0;
	keys_install_session(t, k);
	return k->serial;
}

/* key_update(): "Updating a negative key positively instantiates it". */
long keyctl_update(struct task *t, int id, const void *payload, size_t plen)
{
	struct key *k;
	long r = key_lookup(t, id, KL_CREATE, KP_WRITE, &k, NULL);

	if (r)
		return r;
	if (k->type->keyring)
		return -EOPNOTSUPP;
	if ((r = preparse(k->type, plen)) || (r = key_set_payload(k, payload, plen)))
		return r;
	k->flags &= ~KF_NEGATIVE;
	return 0;
}

long keyctl_revoke(struct task *t, int id)
{
	struct key *k;
	long r = key_lookup(t, id, 0, KP_WRITE, &k, NULL);

	if (r == -EACCES)
		r = key_lookup(t, id, 0, KP_SETATTR, &k, NULL);
	if (r)
		return r;
	key_revoke(k);
	return 0;
}

/* keyctl_chown_key(): without CAP_SYS_ADMIN only to the owner it has and a group of the caller's. */
long keyctl_chown(struct task *t, int id, unsigned uid, unsigned gid)
{
	struct key *k;
	long r;

	if (uid == (unsigned)-1 && gid == (unsigned)-1)
		return 0;	/* before the lookup, as Linux */
	if ((r = key_lookup(t, id, KL_CREATE | KL_PARTIAL, KP_SETATTR, &k, NULL)))
		return r;
	if (sandbox.uid != 0) {
		if (uid != (unsigned)-1 && uid != k->uid)
			return -EACCES;
		if (gid != (unsigned)-1 && gid != k->gid && gid != sandbox.gid)
			return -EACCES;
	}
	if (uid != (unsigned)-1 && uid != k->uid && (r = key_move_quota(k, uid)))
		return r;
	if (gid != (unsigned)-1)
		k->gid = gid;
	return 0;
}

long keyctl_setperm(struct task *t, int id, uint32_t perm)
{
	struct key *k;
	long r;

	if (perm & ~KP_VALID)
		return -EINVAL;
	if ((r = key_lookup(t, id, KL_CREATE | KL_PARTIAL, KP_SETATTR, &k, NULL)))
		return r;
	if (k->uid != sandbox.uid && sandbox.uid != 0)
		return -EACCES;
	k->perm = perm;
	return 0;
}

/* "type;uid;gid;perm;description", with its NUL. */
long keyctl_describe(struct task *t, int id, char **out, size_t *len)
{
	struct key *k;
	long r = key_lookup(t, id, KL_PARTIAL, KP_VIEW, &k, NULL);
	int n;

	if (r)
		return r;
	n = asprintf(out, "%s;%d;%d;%08x;%s", k->type->name, (int)k->uid, (int)k->gid, k->perm, k->desc);
	if (n < 0)
		return -ENOMEM;
	*len = (size_t)n + 1;
	return (long)*len;
}

/*
 * keyctl_read_key(): READ permission, or SEARCH on a possessed key; a
 * keyring's serials or a user key's payload, copied only if all of it fits
 * in buflen, the full size returned either way. The
 * payload is copied while the lock is held: another thread's revoke waits.
 */
long keyctl_read(struct task *t, int id, size_t buflen, char **out, size_t *len)
{
	struct key *k;
	bool pos;
	long r;

	*out = NULL;
	*len = 0;
	if (key_lookup(t, id, 0, KNEED_DEFER, &k, &pos))
		return -ENOKEY;
	if ((k->flags & KF_NEGATIVE) && !(k->flags & (KF_INVALID | KF_REVOKED)))
		return k->reject_error;
	if ((r = key_perm(k, pos, KP_READ))) {
		if (!pos || key_perm(k, pos, KP_SEARCH))
			return -EACCES;
	}
	if (!k->type->has_read)
		return -EOPNOTSUPP;
	if ((r = key_validate(k)))
		return r;
	/* "Read methods will just return the required length without any copying if the provided length isn't large enough." */
	size_t full = k->type->keyring ? k->nlinks * sizeof(int32_t) : k->datalen;
	size_t n = full <= buflen ? full : 0;
	if (n) {
		*out = malloc(n);
		if (!*out)
			return -ENOMEM;
		if (k->type->keyring)
			for (size_t i = 0; i < n / sizeof(int32_t); i++)
				memcpy(*out + i * sizeof(int32_t), &k->links[i]->serial, sizeof(int32_t));
		else
			memcpy(*out, k->data, n);
	}
	*len = n;
	return (long)full;
}

long keyctl_clear(struct task *t, int id)
{
	struct key *k;
	long r = key_lookup(t, id, KL_CREATE, KP_WRITE, &k, NULL);

	if (r)
		return r;
	if (!k->type->keyring)
		return -ENOTDIR;
	keyring_clear(k);
	return 0;
}

long keyctl_link(struct task *t, int id, int ringid)
{
	struct key *ring, *k;
	long r;

	if ((r = key_lookup(t, ringid, KL_CREATE, KP_WRITE, &ring, NULL)) ||
	    (r = key_lookup(t, id, KL_CREATE, KP_LINK, &k, NULL)))
		return r;
	return keyring_link(ring, k);
}

long keyctl_unlink(struct task *t, int id, int ringid)
{
	struct key *ring, *k;
	long r;

	if ((r = key_lookup(t, ringid, 0, KP_WRITE, &ring, NULL)) ||
	    (r = key_lookup(t, id, KL_PARTIAL, KNEED_UNLINK, &k, NULL)))
		return r;
	return keyring_unlink(ring, k);
}

/* keyctl_keyring_search(): a recursive search of one keyring; the key found is linked into destid if given. */
long keyctl_search(struct task *t, int ringid, const char *typename, const char *desc, int destid)
{
	struct key *ring, *dest = NULL, *k;
	bool pos;
	long r;

	if ((r = key_lookup(t, ringid, 0, KP_SEARCH, &ring, &pos)))
		return r;
	if (destid && (r = key_lookup(t, destid, KL_CREATE, KP_WRITE, &dest, NULL)))
		return r;
	const struct key_type *type = key_type_lookup(typename);
	if (!type)
		return -ENOKEY;
	struct key_match m = { .type = type, .desc = desc, .state_check = true };
	r = keyring_search(ring, pos, &m, &k);
	if (r)
		return r == -EAGAIN ? -ENOKEY : r;
	if (dest && ((r = key_perm(k, pos, KP_LINK)) || (r = keyring_link(dest, k))))
		return r;
	return k->serial;
}

/* keyctl_set_reqkey_keyring(): the old default; the thread and process keyrings are made here. */
long keyctl_set_reqkey(struct task *t, int defl)
{
	int old = t->jit_keyring;
	long r;

	switch (defl) {
	case KEY_REQKEY_DEFL_THREAD_KEYRING:
		if (!t->thread_keyring && (r = key_alloc(&key_type_keyring, "_tid", KP_POS(KP_ALL) | KP_USR(KP_VIEW),
							 true, &t->thread_keyring)))
			return r;
		break;
	case KEY_REQKEY_DEFL_PROCESS_KEYRING:
		if (!t->proc->process_keyring &&
		    (r = key_alloc(&key_type_keyring, "_pid", KP_POS(KP_ALL) | KP_USR(KP_VIEW), true,
				   &t->proc->process_keyring)))
			return r;
		break;
	case KEY_REQKEY_DEFL_DEFAULT:
	case KEY_REQKEY_DEFL_SESSION_KEYRING:
	case KEY_REQKEY_DEFL_USER_KEYRING:
	case KEY_REQKEY_DEFL_USER_SESSION_KEYRING:
	case KEY_REQKEY_DEFL_REQUESTOR_KEYRING:
		break;
	case KEY_REQKEY_DEFL_NO_CHANGE:
		return old;
	default:
		return -EINVAL;	/* KEY_REQKEY_DEFL_GROUP_KEYRING too */
	}
	t->jit_keyring = defl;
	return old;
}

long keyctl_set_timeout(struct task *t, int id, unsigned timeout)
{
	struct key *k;
	long r = key_lookup(t, id, KL_CREATE | KL_PARTIAL, KP_SETATTR, &k, NULL);

	if (r)
		return r;
	k->expiry = timeout ? key_now() + timeout : 0;
	return 0;
}

/* key_invalidate(): the key leaves every keyring at once (Linux's gc does it soon after) and lookups fail. */
long keyctl_invalidate(struct task *t, int id)
{
	struct key *k;
	long r = key_lookup(t, id, 0, KP_SEARCH, &k, NULL);

	if (r)
		return r;
	k->flags |= KF_INVALID;
	key_unlink_all(k);
	return 0;
}

/* keyctl_get_security(): no LSM labels keys here, so "an empty string" (its length 1). */
long keyctl_get_security(struct task *t, int id)
{
	struct key *k;
	long r = key_lookup(t, id, KL_PARTIAL, KP_VIEW, &k, NULL);

	return r ? r : 1;
}

/*
 * keyctl_session_to_parent(): the parent (not init, single-threaded) takes
 * our session keyring (Linux installs it when the parent next returns to
 * user space; here at once, which the parent cannot tell apart).
 */
long keyctl_session_to_parent(struct task *t)
{
	struct key *session;
	long r = key_lookup(t, KEY_SPEC_SESSION_KEYRING, 0, KP_LINK, &session, NULL);

	if (r)
		return r;
	struct task *parent = task_find(t->proc->ppid);
	if (!parent || parent->pid <= 1 || parent->state != TASK_LIVE || parent->proc->nr_threads != 1)
		return -EPERM;
	if (parent->session_keyring != session)
		keys_install_session(parent, session);
	return 0;
}

/* keyctl_keyring_move(): unlink from one keyring and link into another, EEXIST under KEYCTL_MOVE_EXCL. */
long keyctl_move(struct task *t, int id, int from, int to, unsigned flags)
{
	struct key *k, *src, *dst;
	long r;

	if (flags & ~KEYCTL_MOVE_EXCL)
		return -EINVAL;
	if ((r = key_lookup(t, id, KL_CREATE, KP_LINK, &k, NULL)) ||
	    (r = key_lookup(t, from, 0, KP_WRITE, &src, NULL)) ||
	    (r = key_lookup(t, to, KL_CREATE, KP_WRITE, &dst, NULL)))
		return r;
	if (!src->type->keyring || !dst->type->keyring)
		return -ENOTDIR;
	if (src == dst)
		return 0;
	bool linked = false;
	for (size_t i = 0; i < src->nlinks; i++)
		linked |= src->links[i] == k;
	if (!linked)
		return -ENOENT;
	for (size_t i = 0; (flags & KEYCTL_MOVE_EXCL) && i < dst->nlinks; i++)
		if (dst->links[i]->type == k->type && !strcmp(dst->links[i]->desc, k->desc))
			return -EEXIST;
	if ((r = keyring_link(dst, k)))
		return r;
	return keyring_unlink(src, k);
}
