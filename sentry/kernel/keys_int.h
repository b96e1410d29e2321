/* SPDX-License-Identifier: GPL-2.0 */
/* The key service's objects, shared by sentry/kernel/keys.c, keys_ctl.c and keys_proc.c only. */
#ifndef PVX_KEYS_INT_H
#define PVX_KEYS_INT_H

#include <errno.h>
#include <stdbool.h>

#include "pvx/keys.h"

/* Permission bits of one class (keyctl(2) KEY_{POS,USR,GRP,OTH}_*): possessor << 24, user << 16, group << 8. */
#define KP_VIEW 0x01u
#define KP_READ 0x02u
#define KP_WRITE 0x04u
#define KP_SEARCH 0x08u
#define KP_LINK 0x10u
#define KP_SETATTR 0x20u
#define KP_ALL 0x3fu
#define KP_POS(p) ((uint32_t)(p) << 24)
#define KP_USR(p) ((uint32_t)(p) << 16)
#define KP_VALID 0x3f3f3f3fu

/* lookup_user_key()'s need values beyond the bits: no check at all (UNLINK), or state not checked (READ). */
#define KNEED_UNLINK 0x100u
#define KNEED_DEFER 0x200u
/* ... and its flags. */
#define KL_CREATE 1
#define KL_PARTIAL 2

#define KEY_SPEC_THREAD_KEYRING (-1)
#define KEY_SPEC_PROCESS_KEYRING (-2)
#define KEY_SPEC_SESSION_KEYRING (-3)
#define KEY_SPEC_USER_KEYRING (-4)
#define KEY_SPEC_USER_SESSION_KEYRING (-5)
#define KEY_SPEC_GROUP_KEYRING (-6)
#define KEY_SPEC_REQKEY_AUTH_KEY (-7)
#define KEY_SPEC_REQUESTOR_KEYRING (-8)

#define KEYRING_SEARCH_MAX_DEPTH 6
#define KEYQUOTA_LINK_BYTES 4	/* a keyring's link costs its owner this much quota */
#define KEY_NEGATIVE_TIMEOUT 60	/* key_negative_timeout: seconds a negative key lives */

struct key_type {
	const char *name;
	bool keyring;
	bool has_read;		/* user: KEYCTL_READ gives the payload; logon: EOPNOTSUPP */
	bool needs_colon;	/* logon: "service:description" */
};

enum key_flag {
	KF_NEGATIVE = 1,	/* negatively instantiated by request_key: reject_error on use */
	KF_REVOKED = 2,
	KF_INVALID = 4,		/* KEYCTL_INVALIDATE: unlinked everywhere, ENOKEY to every lookup */
	KF_IN_QUOTA = 8,	/* charged to its owner (all but none here) */
	KF_UID_KEYRING = 16,	/* a user or user-session keyring: never joined by name */
};

/* Linux's struct key_user: what one uid owns, and its user and user-session keyrings. */
struct key_user {
	unsigned uid;
	int nkeys;
	size_t nbytes;
	struct key *uid_keyring, *session_keyring;
	struct key_user *next;
};

struct key {
	int32_t serial;
	const struct key_type *type;
	char *desc;
	unsigned uid, gid;
	uint32_t perm;
	int refs;		/* links from keyrings and holders (tasks, processes, user records) */
	unsigned flags;
	int reject_error;
	int64_t expiry;		/* CLOCK_REALTIME seconds; 0: never */
	size_t quotalen;	/* bytes charged to the owner: description, payload and links */
	char *data;		/* user and logon payload */
	size_t datalen;
	struct key **links;	/* keyring contents, in link order */
	size_t nlinks, cap;
	unsigned visit;		/* search generation (keys.c) */
	struct key *hnext;	/* serial hash chain */
};

extern const struct key_type key_type_keyring, key_type_user, key_type_logon;

/* keys.c: lifetime and quota. uid's record (NULL if it has none and !create); it may go once it owns nothing. */
struct key_user *key_user_find(unsigned uid, bool create);
const struct key_type *key_type_lookup(const char *name);
struct key *key_find(int32_t serial);
/* Iterate over every key: the next after prev (NULL: the first). */
struct key *key_next(struct key *prev);
/* A new key owned by the sandbox's uid with one reference; overrun: special keyrings may pass the user quota. */
long key_alloc(const struct key_type *type, const char *desc, uint32_t perm, bool overrun, struct key **out)
	__must_check;
void key_get(struct key *k);
void key_put(struct key *k);
/* Set a user key's payload (a copy), charging the difference to the owner's quota. */
long key_set_payload(struct key *k, const void *data, size_t len) __must_check;
/* Move k's charge to uid's record (KEYCTL_CHOWN). */
long key_move_quota(struct key *k, unsigned uid) __must_check;
void key_revoke(struct key *k);
int64_t key_now(void);
/* key_validate(): -ENOKEY invalidated, -EKEYREVOKED, -EKEYEXPIRED, else 0. */
long key_validate(const struct key *k);
long key_perm(const struct key *k, bool possessed, unsigned need);
/* Per-user counts for /proc/key-users: calls fn for each record. */
void key_users_each(void (*fn)(unsigned uid, int usage, int nkeys, size_t nbytes, void *arg), void *arg);
long key_maxkeys(unsigned uid);
long key_maxbytes(unsigned uid);

/* keys.c: keyrings. */
long keyring_link(struct key *ring, struct key *k) __must_check;
long keyring_unlink(struct key *ring, struct key *k) __must_check;
void keyring_clear(struct key *ring);
/* Remove k from every keyring (KEYCTL_INVALIDATE). */
void key_unlink_all(struct key *k);
/* A keyring of that name t may search (find_keyring_by_name()); NULL if none. */
struct key *keyring_find_by_name(const char *name);

/* keys.c: searches. match: type and description, or one key. */
struct key_match {
	const struct key_type *type;
	const char *desc;
	const struct key *key;
	bool state_check;	/* KEYRING_SEARCH_DO_STATE_CHECK */
	bool skip_expired;	/* KEYRING_SEARCH_SKIP_EXPIRED (request_key): an expired match is no error */
	bool skip_perm;		/* KEYRING_SEARCH_NO_CHECK_PERM */
};
long keyring_search(struct key *ring, bool possessed, const struct key_match *m, struct key **out);
/* search_process_keyrings_rcu(): t's thread, process and session (or user-session) keyrings; -EAGAIN: none. */
long keys_search_task(struct task *t, const struct key_match *m, struct key **out);
bool key_possessed(struct task *t, const struct key *k);

/* keys_task.c: lookup_user_key(): the key an id names for t, possessed or not, after the checks need asks for. */
long key_lookup(struct task *t, int id, int lflags, unsigned need, struct key **out, bool *possessed) __must_check;
long keys_user_keyrings(unsigned uid, struct key **user, struct key **session) __must_check;
long keys_install_session(struct task *t, struct key *ring);
long keys_new_session(struct task *t, const char *name, uint32_t perm, struct key **out) __must_check;

#endif
