// SPDX-License-Identifier: GPL-2.0
/*
 * The sandbox's keys and keyrings (security/keys/ in Linux), emulated:
 * nothing here touches the host's keyrings. Keys live while a keyring
 * links them or a task holds them as a special keyring; each is charged to
 * its owner's quota as Linux charges it (the description, the payload, 4
 * bytes per link) against maxkeys/maxbytes (200 keys and 20000 bytes, root
 * 1000000 and 25000000), and the whole sandbox has a cap of its own
 * (KEYS_TOTAL_*) so that a guest root that moves keys to other uids with
 * KEYCTL_CHOWN still cannot grow the sentry without bound. The sentry lock
 * serialises everything, so a key revoked by one thread is never half-read
 * by another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "sentry/kernel/keys_int.h"

#define KEYS_TOTAL_KEYS 10000
#define KEYS_TOTAL_BYTES (2u << 20)
#define KEY_HASH 256

const struct key_type key_type_keyring = { "keyring", true, true, false };
const struct key_type key_type_user = { "user", false, true, false };
const struct key_type key_type_logon = { "logon", false, false, true };

static struct key *hash[KEY_HASH];
static struct key_user *users;
static int total_keys;
static size_t total_bytes;
static unsigned visit_gen;

const struct key_type *key_type_lookup(const char *name)
{
	static const struct key_type *const types[] = { &key_type_keyring, &key_type_user, &key_type_logon };

	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (!strcmp(types[i]->name, name))
			return types[i];
	return NULL;
}

int64_t key_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

struct key *key_find(int32_t serial)
{
	for (struct key *k = hash[(uint32_t)serial % KEY_HASH]; k; k = k->hnext)
		if (k->serial == serial)
			return k;
	return NULL;
}

struct key *key_next(struct key *prev)
{
	if (prev && prev->hnext)
		return prev->hnext;
	for (unsigned b = prev ? (uint32_t)prev->serial % KEY_HASH + 1 : 0; b < KEY_HASH; b++)
		if (hash[b])
			return hash[b];
	return NULL;
}

long key_maxkeys(unsigned uid)
{
	return uid == 0 ? 1000000 : 200;	/* key_quota_root_maxkeys, key_quota_maxkeys */
}

long key_maxbytes(unsigned uid)
{
	return uid == 0 ? 25000000 : 20000;
}

struct key_user *key_user_find(unsigned uid, bool create)
{
	struct key_user *u;

	for (u = users; u; u = u->next)
		if (u->uid == uid)
			return u;
	if (!create || !(u = calloc(1, sizeof(*u))))
		return NULL;
	u->uid = uid;
	u->next = users;
	users = u;
	return u;
}

/* A record with nothing charged and no keyrings goes (root's KEYCTL_CHOWN may name any uid). */
static void user_maybe_free(struct key_user *u)
{
	if (u->nkeys || u->nbytes || u->uid_keyring)
		return;
	for (struct key_user **pp = &users; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			free(u);
			return;
		}
}

/* Charge nkeys and nbytes (either may be negative) to uid; -EDQUOT past its quota or the sandbox's. */
static long quota_charge(unsigned uid, int nkeys, long nbytes, bool check)
{
	struct key_user *u = key_user_find(uid, true);

	if (!u)
		return -ENOMEM;
	if ((nkeys > 0 || nbytes > 0) &&
	    (total_keys + nkeys > KEYS_TOTAL_KEYS || total_bytes + (size_t)MAX(nbytes, 0) > KEYS_TOTAL_BYTES ||
	     (check && (u->nkeys + nkeys > key_maxkeys(uid) ||
			(long)u->nbytes + nbytes > key_maxbytes(uid))))) {
		user_maybe_free(u);
		return -EDQUOT;
	}
	u->nkeys += nkeys;
	u->nbytes = (size_t)((long)u->nbytes + nbytes);
	total_keys += nkeys;
	total_bytes = (size_t)((long)total_bytes + nbytes);
	user_maybe_free(u);
	return 0;
}

void key_users_each(void (*fn)(unsigned uid, int usage, int nkeys, size_t nbytes, void *arg), void *arg)
{
	for (struct key_user *u = users; u; u = u->next)
		fn(u->uid, u->nkeys, u->nkeys, u->nbytes, arg);
}

/* key_alloc_serial(): a random positive serial of at least 3 that no key has. */
static int32_t new_serial(void)
{
	uint32_t s = 0;

	if (getrandom(&s, sizeof(s), 0) != sizeof(s))
		s = (uint32_t)rand();
	s >>= 1;
	for (;;) {
		if (s < 3)
			s += 3;
		if (!key_find((int32_t)s))
			return (int32_t)s;
		s = (s + 1) & 0x7fffffff;
	}
}

long key_alloc(const struct key_type *type, const char *desc, uint32_t perm, bool overrun, struct key **out)
{
	size_t quotalen = strlen(desc) + 1;
	struct key *k = calloc(1, sizeof(*k));
	long r = -ENOMEM;

	if (!k || !(k->desc = strdup(desc)))
		goto fail;
	r = quota_charge(sandbox.uid, 1, (long)quotalen, !overrun);
	if (r)
		goto fail;
	k->type = type;
	k->uid = sandbox.uid;
	k->gid = sandbox.gid;
	k->perm = perm;
	k->refs = 1;
	k->flags = KF_IN_QUOTA;
	k->quotalen = quotalen;
	k->serial = new_serial();
	k->hnext = hash[(uint32_t)k->serial % KEY_HASH];
	hash[(uint32_t)k->serial % KEY_HASH] = k;
	*out = k;
	return 0;
fail:
	if (k)
		free(k->desc);
	free(k);
	return r;
}

void key_get(struct key *k)
{
	k->refs++;
}

/* Unhash and free one key whose last reference went; its links' keys join the list to put. */
static void key_destroy(struct key *k, struct key ***todo, size_t *n, size_t *cap)
{
	for (struct key **pp = &hash[(uint32_t)k->serial % KEY_HASH]; *pp; pp = &(*pp)->hnext)
		if (*pp == k) {
			*pp = k->hnext;
			break;
		}
	(void)quota_charge(k->uid, -1, -(long)k->quotalen, false);
	for (size_t i = 0; i < k->nlinks; i++) {
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			struct key **t = realloc(*todo, c * sizeof(*t));
			if (!t) {	/* never: fall back to freeing this one's links by recursion */
				key_put(k->links[i]);
				continue;
			}
			*todo = t;
			*cap = c;
		}
		(*todo)[(*n)++] = k->links[i];
	}
	free(k->links);
	free(k->data);
	free(k->desc);
	free(k);
}

/* Drop a reference; a key nobody holds goes, and so may what it linked (without recursing: chains are long). */
void key_put(struct key *k)
{
	struct key **todo = NULL;
	size_t n = 0, cap = 0;

	if (--k->refs > 0)
		return;
	key_destroy(k, &todo, &n, &cap);
	while (n > 0) {
		struct key *c = todo[--n];
		if (--c->refs == 0)
			key_destroy(c, &todo, &n, &cap);
	}
	free(todo);
}

long key_set_payload(struct key *k, const void *data, size_t len)
{
	char *copy = malloc(len ? len : 1);
	long delta = (long)len - (long)k->datalen;
	long r;

	if (!copy)
		return -ENOMEM;
	if ((r = quota_charge(k->uid, 0, delta, true))) {
		free(copy);
		return r;
	}
	memcpy(copy, data, len);
	free(k->data);
	k->data = copy;
	k->datalen = len;
	k->quotalen = (size_t)((long)k->quotalen + delta);
	return 0;
}

long key_move_quota(struct key *k, unsigned uid)
{
	long r = quota_charge(uid, 1, (long)k->quotalen, true);

	if (r)
		return r;
	(void)quota_charge(k->uid, -1, -(long)k->quotalen, false);
	k->uid = uid;
	return 0;
}

/* key_revoke(): a user key's payload goes (user_revoke()), a keyring's links go (keyring_revoke()). */
void key_revoke(struct key *k)
{
	if (k->flags & KF_REVOKED)
		return;
	k->flags |= KF_REVOKED;
	if (k->type->keyring) {
		keyring_clear(k);
	} else if (k->data) {
		(void)quota_charge(k->uid, 0, -(long)k->datalen, false);
		k->quotalen -= k->datalen;
		free(k->data);
		k->data = NULL;
		k->datalen = 0;
	}
}

long key_validate(const struct key *k)
{
	if (k->flags & KF_INVALID)
		return -ENOKEY;
	if (k->flags & KF_REVOKED)
		return -EKEYREVOKED;
	if (k->expiry && key_now() >= k->expiry)
		return -EKEYEXPIRED;
	return 0;
}

/*
 * key_task_permission(): the owner's bits if the caller owns it, else the
 * group's if it is the caller's group, else other's; a possessor adds the
 * possessor bits. Root has no override here, as on Linux.
 */
long key_perm(const struct key *k, bool possessed, unsigned need)
{
	uint32_t kperm;

	if (k->uid == sandbox.uid)
		kperm = k->perm >> 16;
	else if (k->gid == sandbox.gid && (k->perm & 0x3f00))
		kperm = k->perm >> 8;
	else
		kperm = k->perm;
	if (possessed)
		kperm |= k->perm >> 24;
	need &= KP_ALL;
	return (kperm & need) == need ? 0 : -EACCES;
}

/* Does this link match the index key (type, description) of k? */
static bool same_index(const struct key *a, const struct key *b)
{
	return a->type == b->type && !strcmp(a->desc, b->desc);
}

/*
 * keyring_detect_cycle(): is target reachable from ring? -EDEADLK if so,
 * else -ELOOP if ring's keyrings nest past the depth limit, else 0.
 * Breadth first, each keyring once: a guest's lattice of keyrings costs no
 * more than its links (a depth-first walk of every path would be
 * exponential in the depth).
 */
static long check_cycle(struct key *ring, struct key *target)
{
	struct key **queue;
	int *depth;
	size_t head = 0, tail = 0;
	long err = 0;

	if (ring == target)
		return -EDEADLK;
	queue = malloc((size_t)(total_keys + 1) * sizeof(*queue));
	depth = malloc((size_t)(total_keys + 1) * sizeof(*depth));
	if (!queue || !depth) {
		err = -ENOMEM;
		goto out;
	}
	if (++visit_gen == 0)
		visit_gen = 1;
	ring->visit = visit_gen;
	queue[tail] = ring;
	depth[tail++] = 0;
	while (head < tail) {
		struct key *r = queue[head];
		int d = depth[head++];
		for (size_t i = 0; i < r->nlinks; i++) {
			struct key *c = r->links[i];
			if (!c->type->keyring || (c->flags & (KF_REVOKED | KF_INVALID)))
				continue;
			if (c == target) {
				err = -EDEADLK;
				goto out;
			}
			if (c->visit == visit_gen || tail > (size_t)total_keys)
				continue;
			if (d + 1 >= KEYRING_SEARCH_MAX_DEPTH) {
				err = -ELOOP;
				continue;
			}
			c->visit = visit_gen;
			queue[tail] = c;
			depth[tail++] = d + 1;
		}
	}
out:
	free(queue);
	free(depth);
	return err;
}

/* key_link(): link k into ring, replacing a key of the same type and description; a new link costs quota. */
long keyring_link(struct key *ring, struct key *k)
{
	long r;

	if (!ring->type->keyring)
		return -ENOTDIR;
	if ((r = key_validate(ring)))
		return r;
	if (k->type->keyring && (r = check_cycle(k, ring)))
		return r;
	for (size_t i = 0; i < ring->nlinks; i++)
		if (same_index(ring->links[i], k)) {
			struct key *old = ring->links[i];
			key_get(k);
			ring->links[i] = k;
			key_put(old);
			return 0;
		}
	if (ring->nlinks == ring->cap) {
		size_t c = ring->cap ? ring->cap * 2 : 4;
		struct key **l = realloc(ring->links, c * sizeof(*l));
		if (!l)
			return -ENOMEM;
		ring->links = l;
		ring->cap = c;
	}
	if ((r = quota_charge(ring->uid, 0, KEYQUOTA_LINK_BYTES, true)))
		return r;
	ring->quotalen += KEYQUOTA_LINK_BYTES;
	key_get(k);
	ring->links[ring->nlinks++] = k;
	return 0;
}

/* Take link i out of ring, refunding its quota; the key may go. */
static void unlink_at(struct key *ring, size_t i)
{
	struct key *k = ring->links[i];

	memmove(&ring->links[i], &ring->links[i + 1], (ring->nlinks - i - 1) * sizeof(*ring->links));
	ring->nlinks--;
	(void)quota_charge(ring->uid, 0, -KEYQUOTA_LINK_BYTES, false);
	ring->quotalen -= KEYQUOTA_LINK_BYTES;
	key_put(k);
}

long keyring_unlink(struct key *ring, struct key *k)
{
	if (!ring->type->keyring)
		return -ENOTDIR;
	for (size_t i = 0; i < ring->nlinks; i++)
		if (ring->links[i] == k) {
			unlink_at(ring, i);
			return 0;
		}
	return -ENOENT;
}

void keyring_clear(struct key *ring)
{
	key_get(ring);	/* its last link may be a holder of ring's own */
	while (ring->nlinks)
		unlink_at(ring, ring->nlinks - 1);
	key_put(ring);
}

void key_unlink_all(struct key *k)
{
	key_get(k);
	for (struct key *r = key_next(NULL); r; r = key_next(r))
		for (size_t i = 0; r->type->keyring && i < r->nlinks; i++)
			if (r->links[i] == k) {
				unlink_at(r, i);
				break;
			}
	key_put(k);
}

/* find_keyring_by_name(): not revoked, searchable without possession, not a user keyring. */
struct key *keyring_find_by_name(const char *name)
{
	for (struct key *k = key_next(NULL); k; k = key_next(k))
		if (k->type->keyring && !(k->flags & (KF_REVOKED | KF_INVALID | KF_UID_KEYRING)) &&
		    !strcmp(k->desc, name) && !key_perm(k, false, KP_SEARCH))
			return k;
	return NULL;
}

/*
 * keyring_search_iterator(): -EAGAIN if k does not match; 0 for a match
 * that is usable, else why not (revoked or invalidated, expired, no search
 * permission, negative).
 */
static long search_check(const struct key *k, bool possessed, const struct key_match *m)
{
	if (m->key ? k != m->key : (k->type != m->type || strcmp(k->desc, m->desc)))
		return -EAGAIN;
	if (m->state_check) {
		if (k->flags & (KF_INVALID | KF_REVOKED))
			return -EKEYREVOKED;
		if (k->expiry && key_now() >= k->expiry)
			return m->skip_expired ? -EAGAIN : -EKEYEXPIRED;
	}
	if (!m->skip_perm && key_perm(k, possessed, KP_SEARCH))
		return -EACCES;
	if (m->state_check && (k->flags & KF_NEGATIVE))
		return k->reject_error;
	return 0;
}

/*
 * keyring_search_rcu(): ring itself, then its keys, then the keyrings it
 * links that the caller may search, breadth first to the depth limit (each
 * keyring once: a guest's diamond of keyrings costs no more than its
 * links). A match that is unusable is remembered as the error if nothing
 * better is found; -EAGAIN: no match at all.
 */
long keyring_search(struct key *ring, bool possessed, const struct key_match *m, struct key **out)
{
	struct key **queue;
	int *depth;
	size_t head = 0, tail = 0;
	long err = -EAGAIN, r;

	if (!ring->type->keyring)
		return -ENOTDIR;
	if (!m->skip_perm && (r = key_perm(ring, possessed, KP_SEARCH)))
		return r;
	if ((r = search_check(ring, possessed, m)) != -EAGAIN) {
		if (!r)
			*out = ring;
		return r;
	}
	queue = malloc((size_t)(total_keys + 1) * sizeof(*queue));
	depth = malloc((size_t)(total_keys + 1) * sizeof(*depth));
	if (!queue || !depth) {
		free(queue);
		free(depth);
		return -ENOMEM;
	}
	if (++visit_gen == 0)
		visit_gen = 1;
	ring->visit = visit_gen;
	queue[tail] = ring;
	depth[tail++] = 0;
	while (head < tail) {
		struct key *rg = queue[head];
		int d = depth[head++];
		for (size_t i = 0; i < rg->nlinks; i++) {
			struct key *k = rg->links[i];
			r = search_check(k, possessed, m);
			if (!r) {
				*out = k;
				err = 0;
				goto out;
			}
			if (r != -EAGAIN)
				err = r;
		}
		for (size_t i = 0; i < rg->nlinks; i++) {
			struct key *k = rg->links[i];
			if (!k->type->keyring || k->visit == visit_gen || d + 1 >= KEYRING_SEARCH_MAX_DEPTH ||
			    (k->flags & (KF_REVOKED | KF_INVALID | KF_NEGATIVE)) ||
			    (!m->skip_perm && key_perm(k, possessed, KP_SEARCH)) || tail > (size_t)total_keys)
				continue;
			k->visit = visit_gen;
			queue[tail] = k;
			depth[tail++] = d + 1;
		}
	}
out:
	free(queue);
	free(depth);
	return err;
}

/* The user-session keyring of the sandbox's uid if it exists (get_user_session_keyring_rcu()). */
static struct key *user_session_existing(void)
{
	struct key_user *u = key_user_find(sandbox.uid, false);

	return u ? u->session_keyring : NULL;
}

/*
 * search_cred_keyrings_rcu(): the thread, process and session keyrings (the
 * user-session keyring without a session), all possessed. A negative key
 * (-ENOKEY) wins over other errors; -EAGAIN when nothing matched.
 */
long keys_search_task(struct task *t, const struct key_match *m, struct key **out)
{
	struct key *rings[3] = { t->thread_keyring, t->proc->process_keyring,
				 t->session_keyring ? t->session_keyring : user_session_existing() };
	long neg = 0, err = -EAGAIN;

	for (int i = 0; i < 3; i++) {
		if (!rings[i])
			continue;
		long r = keyring_search(rings[i], true, m, out);
		if (!r)
			return 0;
		if (r == -ENOKEY || (r == -EAGAIN && !neg))
			neg = r;	/* a negative key is not forgotten by a later keyring's "no key" */
		else
			err = r;
	}
	return neg ? neg : err;
}

bool key_possessed(struct task *t, const struct key *k)
{
	struct key_match m = { .key = k };
	struct key *found;

	return keys_search_task(t, &m, &found) == 0;
}
