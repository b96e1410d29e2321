// SPDX-License-Identifier: GPL-2.0
/*
 * The keyrings a task has (security/keys/process_keys.c): its thread
 * keyring, its process's, its session keyring (shared by fork, replaced by
 * KEYCTL_JOIN_SESSION_KEYRING), the user and user-session keyrings of the
 * sandbox's uid, all made on first use; lookup_user_key(), which turns a
 * serial or a KEY_SPEC_* id into a key with Linux's checks; and what
 * clone, execve and exit do to them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sentry/kernel/keys_int.h"

/*
 * The user keyrings keys_user_keyrings let go of during this keys call:
 * their references go when the call ends (keys_call_end), not at once. A
 * key the call looked up before -- by its serial, with no reference of its
 * own -- may be one of them: keyctl(KEYCTL_UNLINK, KEY_SPEC_USER_KEYRING,
 * <the user-session keyring's serial>) after a revoke of the user keyring
 * would otherwise unlink from a freed keyring.
 */
static struct key **retired;
static size_t nretired;

void keys_call_end(void)
{
	for (size_t i = 0; i < nretired; i++)
		key_put(retired[i]);
	nretired = 0;
}

/* look_up_user_keyrings(): uid's user keyring and user-session keyring, made on first use. */
long keys_user_keyrings(unsigned uid, struct key **user, struct key **session)
{
	struct key_user *u = key_user_find(uid, false);
	struct key *uk, *sk;
	char name[32];
	long r;

	/* Revoked or invalidated: Linux's gc drops them and the next use makes new ones. */
	if (u && u->uid_keyring && ((u->uid_keyring->flags | u->session_keyring->flags) & (KF_REVOKED | KF_INVALID))) {
		struct key **n = realloc(retired, (nretired + 2) * sizeof(*retired));
		if (!n)
			return -ENOMEM;
		retired = n;
		retired[nretired++] = u->session_keyring;	/* put at keys_call_end */
		retired[nretired++] = u->uid_keyring;
		u->uid_keyring = u->session_keyring = NULL;
	}
	u = key_user_find(uid, false);
	if (!u || !u->uid_keyring) {
		snprintf(name, sizeof(name), "_uid.%u", uid);
		if ((r = key_alloc(&key_type_keyring, name, KP_POS(KP_ALL) | KP_USR(KP_ALL), false, &uk)))
			return r;
		snprintf(name, sizeof(name), "_uid_ses.%u", uid);
		if ((r = key_alloc(&key_type_keyring, name, KP_POS(KP_ALL) | KP_USR(KP_ALL), false, &sk))) {
			key_put(uk);
			return r;
		}
		if ((r = keyring_link(sk, uk)) || !(u = key_user_find(uid, true))) {
			key_put(sk);
			key_put(uk);
			return r ? r : -ENOMEM;
		}
		uk->flags |= KF_UID_KEYRING;
		sk->flags |= KF_UID_KEYRING;
		u->uid_keyring = uk;	/* the record's references, for the whole run */
		u->session_keyring = sk;
	}
	if (user)
		*user = u->uid_keyring;
	if (session)
		*session = u->session_keyring;
	return 0;
}

long keys_install_session(struct task *t, struct key *ring)
{
	struct key *old = t->session_keyring;

	if (ring)
		key_get(ring);
	t->session_keyring = ring;
	if (old)
		key_put(old);
	return 0;
}

/* install_session_keyring_to_cred(): a new session keyring for t, name "_ses" unless given. */
long keys_new_session(struct task *t, const char *name, uint32_t perm, struct key **out)
{
	struct key *k;
	long r = key_alloc(&key_type_keyring, name ? name : "_ses", perm, !name, &k);

	if (r)
		return r;
	keys_install_session(t, k);
	key_put(k);
	*out = k;
	return 0;
}

/* A thread or process keyring for *slot (install_{thread,process}_keyring_to_cred()). */
static long install_special(struct key **slot, const char *name)
{
	if (*slot)
		return 0;
	return key_alloc(&key_type_keyring, name, KP_POS(KP_ALL) | KP_USR(KP_VIEW), true, slot);
}

/* The special keyring id names for t (lookup_user_key()'s switch); possessed by definition. */
static long lookup_special(struct task *t, int id, int lflags, struct key **out)
{
	struct key *user, *session;
	long r;

	switch (id) {
	case KEY_SPEC_THREAD_KEYRING:
		if (!t->thread_keyring && !(lflags & KL_CREATE))
			return -ENOKEY;
		if ((r = install_special(&t->thread_keyring, "_tid")))
			return r;
		*out = t->thread_keyring;
		return 0;
	case KEY_SPEC_PROCESS_KEYRING:
		if (!t->proc->process_keyring && !(lflags & KL_CREATE))
			return -ENOKEY;
		if ((r = install_special(&t->proc->process_keyring, "_pid")))
			return r;
		*out = t->proc->process_keyring;
		return 0;
	case KEY_SPEC_SESSION_KEYRING:
		/* "always install a session keyring upon access if one doesn't exist yet" */
		if ((r = keys_user_keyrings(sandbox.uid, NULL, &session)))
			return r;
		if (!t->session_keyring || (t->session_keyring == session && (lflags & KL_CREATE))) {
			if (lflags & KL_CREATE)
				return keys_new_session(t, NULL, KP_POS(KP_ALL) | KP_USR(KP_VIEW | KP_READ), out);
			keys_install_session(t, session);
		}
		*out = t->session_keyring;
		return 0;
	case KEY_SPEC_USER_KEYRING:
	case KEY_SPEC_USER_SESSION_KEYRING:
		if ((r = keys_user_keyrings(sandbox.uid, &user, &session)))
			return r;
		*out = id == KEY_SPEC_USER_KEYRING ? user : session;
		return 0;
	case KEY_SPEC_REQKEY_AUTH_KEY:
	case KEY_SPEC_REQUESTOR_KEYRING:
		return -ENOKEY;	/* no request_key upcall runs here, so there is never an authorisation key */
	default:
		return -EINVAL;	/* KEY_SPEC_GROUP_KEYRING ("not yet implemented" in Linux too), 0, below -8 */
	}
}

/*
 * lookup_user_key(): the key id names, possessed if it is a special
 * keyring or reachable from t's keyrings; then, unless KNEED_UNLINK, its
 * state (a negative key's error and -EKEYREVOKED/-EKEYEXPIRED, or with
 * KL_PARTIAL only the latter; KNEED_DEFER skips this) and the permission.
 */
long key_lookup(struct task *t, int id, int lflags, unsigned need, struct key **out, bool *possessed)
{
	struct key *k = NULL;
	bool pos = true;
	long r;

	if (id > 0) {
		k = key_find(id);
		if (!k || (k->flags & KF_INVALID))
			return -ENOKEY;
		pos = key_possessed(t, k);
	} else if ((r = lookup_special(t, id, lflags, &k))) {
		return r;
	}
	if (need != KNEED_UNLINK && need != KNEED_DEFER) {
		if (!(lflags & KL_PARTIAL) && (k->flags & KF_NEGATIVE) && !(k->flags & (KF_INVALID | KF_REVOKED)))
			r = k->reject_error;
		else
			r = key_validate(k);
		if (r)
			return r;
	}
	if (need & KP_ALL && (r = key_perm(k, pos, need)))
		return r;
	*out = k;
	if (possessed)
		*possessed = pos;
	return 0;
}

/*
 * copy_creds(): fork and clone share the session keyring; "new threads get
 * their own thread keyrings if their parent already had one" (not made if
 * the sandbox's cap is reached, as Linux ignores that failure); a new
 * process has no process keyring.
 */
void keys_clone_task(struct task *child, const struct task *parent, bool new_process)
{
	child->thread_keyring = NULL;
	if (!new_process && parent->thread_keyring)
		(void)install_special(&child->thread_keyring, "_tid");
	child->session_keyring = parent->session_keyring;
	if (child->session_keyring)
		key_get(child->session_keyring);
	child->jit_keyring = parent->jit_keyring;
	if (new_process)
		child->proc->process_keyring = NULL;
}

/* prepare_exec_creds(): "newly exec'd tasks don't get a thread keyring", and a new process keyring. */
void keys_exec(struct task *t)
{
	if (t->thread_keyring)
		key_put(t->thread_keyring);
	t->thread_keyring = NULL;
	if (t->proc->process_keyring)
		key_put(t->proc->process_keyring);
	t->proc->process_keyring = NULL;
}

void keys_task_free(struct task *t)
{
	if (t->thread_keyring)
		key_put(t->thread_keyring);
	if (t->session_keyring)
		key_put(t->session_keyring);
	t->thread_keyring = t->session_keyring = NULL;
}

void keys_process_free(struct process *p)
{
	if (p->process_keyring)
		key_put(p->process_keyring);
	p->process_keyring = NULL;
}
