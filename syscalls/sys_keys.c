// SPDX-License-Identifier: GPL-2.0
/*
 * add_key(2), request_key(2) and keyctl(2): the guest's strings and
 * payloads copied in with Linux's limits and errors, in Linux's order
 * (type, description, payload, then the keyrings); the keys themselves are
 * the sandbox's own (sentry/kernel/keys*.c), never the host's.
 */
#include <stdlib.h>
#include <string.h>

#include "pvx/keys.h"
#include "syscalls/syscalls.h"

enum {
	KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_UPDATE, KEYCTL_REVOKE, KEYCTL_CHOWN,
	KEYCTL_SETPERM, KEYCTL_DESCRIBE, KEYCTL_CLEAR, KEYCTL_LINK, KEYCTL_UNLINK, KEYCTL_SEARCH, KEYCTL_READ,
	KEYCTL_INSTANTIATE, KEYCTL_NEGATE, KEYCTL_SET_REQKEY_KEYRING, KEYCTL_SET_TIMEOUT,
	KEYCTL_ASSUME_AUTHORITY, KEYCTL_GET_SECURITY, KEYCTL_SESSION_TO_PARENT, KEYCTL_REJECT,
	KEYCTL_INSTANTIATE_IOV, KEYCTL_INVALIDATE, KEYCTL_GET_PERSISTENT, KEYCTL_MOVE = 30, KEYCTL_CAPABILITIES,
};

/* key_get_type_from_user(): "" or 32 bytes without a NUL are EINVAL, a type beginning with '.' EPERM. */
static long get_type(struct task *t, uint64_t src, char type[PVX_KEY_TYPE_MAX])
{
	long n = strncpy_from_guest(t->mm, type, src, PVX_KEY_TYPE_MAX);

	if (n == -EFAULT)
		return n;
	if (n <= 0)
		return -EINVAL;
	return type[0] == '.' ? -EPERM : 0;
}

/* strndup_user(): a string of at most max bytes with its NUL, malloc'd; EFAULT, EINVAL when longer. */
static long get_string(struct task *t, uint64_t src, size_t max, char **out)
{
	char *s = malloc(max);
	long n;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	n = strncpy_from_guest(t->mm, s, src, max);
	if (n < 0) {
		free(s);
		return n == -EFAULT ? n : -EINVAL;
	}
	*out = s;
	return 0;
}

/* A payload of plen bytes (none for 0), malloc'd. */
static long get_payload(struct task *t, uint64_t src, size_t plen, char **out)
{
	*out = NULL;
	if (!plen)
		return 0;
	if (!(*out = malloc(plen)))
		return -ENOMEM;
	if (copy_from_guest(t->mm, *out, src, plen)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	return 0;
}

/* add_key(2): an empty description is none; a keyring's may not begin with '.' (EPERM). */
long sys_add_key(struct task *t, const long a[6])
{
	char type[PVX_KEY_TYPE_MAX];
	cleanup_free char *desc = NULL;
	cleanup_free char *payload = NULL;
	size_t plen = (size_t)a[3];
	long r;

	if (plen > PVX_KEY_PAYLOAD_MAX)
		return -EINVAL;
	if ((r = get_type(t, (uint64_t)a[0], type)))
		return r;
	if (a[1] && (r = get_string(t, (uint64_t)a[1], PVX_KEY_DESC_MAX, &desc)))
		return r;
	if (desc && !desc[0]) {
		free(desc);
		desc = NULL;
	} else if (desc && desc[0] == '.' && !strncmp(type, "keyring", 7)) {
		return -EPERM;
	}
	if ((r = get_payload(t, (uint64_t)a[2], plen, &payload)))
		return r;
	r = keys_add(t, type, desc, payload, plen, (int)a[4]);
	keys_call_end();
	return r;
}

long sys_request_key(struct task *t, const long a[6])
{
	char type[PVX_KEY_TYPE_MAX];
	cleanup_free char *desc = NULL;
	cleanup_free char *callout = NULL;
	long r;

	if ((r = get_type(t, (uint64_t)a[0], type)) || (r = get_string(t, (uint64_t)a[1], PVX_KEY_DESC_MAX, &desc)))
		return r;
	if (a[2] && (r = get_string(t, (uint64_t)a[2], PVX_KEY_CALLOUT_MAX, &callout)))
		return r;
	r = keys_request(t, type, desc, callout, (int)a[3]);
	keys_call_end();
	return r;
}

/* Hand out a describe or read result: copied only where the guest gave room (as each operation says). */
static long put_out(struct task *t, uint64_t buf, const char *data, size_t n, long r)
{
	if (r >= 0 && buf && n && copy_to_guest(t->mm, buf, data, n))
		return -EFAULT;
	return r;
}

static long ctl_describe(struct task *t, int id, uint64_t buf, size_t buflen)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	long r = keyctl_describe(t, id, &text, &len);

	/* keyctl_describe_key(): "if (buffer && buflen >= ret)" the whole string, else nothing. */
	return put_out(t, buf, text, buflen >= len ? len : 0, r);
}

static long ctl_read(struct task *t, int id, uint64_t buf, size_t buflen)
{
	cleanup_free char *data = NULL;
	size_t len = 0;
	long r = keyctl_read(t, id, buf ? buflen : 0, &data, &len);

	return put_out(t, buf, data, len, r);
}

static long ctl_search(struct task *t, int ringid, uint64_t utype, uint64_t udesc, int destid)
{
	char type[PVX_KEY_TYPE_MAX];
	cleanup_free char *desc = NULL;
	long r;

	if ((r = get_type(t, utype, type)) || (r = get_string(t, udesc, PVX_KEY_DESC_MAX, &desc)))
		return r;
	return keyctl_search(t, ringid, type, desc, destid);
}

static long ctl_join(struct task *t, uint64_t uname)
{
	cleanup_free char *name = NULL;
	long r;

	if (uname && (r = get_string(t, uname, PVX_KEY_DESC_MAX, &name)))
		return r;
	if (name && !name[0])
		return -EINVAL;
	return keyctl_join_session(t, name);
}

static long ctl_update(struct task *t, int id, uint64_t upayload, size_t plen)
{
	cleanup_free char *payload = NULL;
	long r;

	if (plen > PVX_KEY_UPDATE_MAX)
		return -EINVAL;
	if ((r = get_payload(t, upayload, plen, &payload)))
		return r;
	return keyctl_update(t, id, payload, plen);
}

/* KEYCTL_CAPABILITIES: what this service has (invalidate, move, namespaced names), as much as buflen holds. */
static long ctl_capabilities(struct task *t, uint64_t buf, size_t buflen)
{
	const unsigned char caps[2] = { 0x01 | 0x20 | 0x80, 0x01 | 0x02 };

	if (buf && buflen && copy_to_guest(t->mm, buf, caps, MIN(buflen, sizeof(caps))))
		return -EFAULT;
	return sizeof(caps);
}

/*
 * keyctl(2). Instantiation (INSTANTIATE, NEGATE, REJECT, INSTANTIATE_IOV)
 * needs the authorisation key of a request_key upcall, which never runs
 * here: EPERM, as for any caller without one. Persistent keyrings, Diffie-
 * Hellman, public keys, keyring restrictions and notifications are
 * configured out: EOPNOTSUPP, as Linux answers for an unknown operation.
 */
static long keyctl_op(struct task *t, const long a[6])
{
	int id = (int)a[1];

	switch ((int)a[0]) {
	case KEYCTL_GET_KEYRING_ID: return keyctl_get_keyring_id(t, id, (int)a[2] != 0);
	case KEYCTL_JOIN_SESSION_KEYRING: return ctl_join(t, (uint64_t)a[1]);
	case KEYCTL_UPDATE: return ctl_update(t, id, (uint64_t)a[2], (size_t)a[3]);
	case KEYCTL_REVOKE: return keyctl_revoke(t, id);
	case KEYCTL_CHOWN: return keyctl_chown(t, id, (unsigned)a[2], (unsigned)a[3]);
	case KEYCTL_SETPERM: return keyctl_setperm(t, id, (uint32_t)a[2]);
	case KEYCTL_DESCRIBE: return ctl_describe(t, id, (uint64_t)a[2], (size_t)a[3]);
	case KEYCTL_CLEAR: return keyctl_clear(t, id);
	case KEYCTL_LINK: return keyctl_link(t, id, (int)a[2]);
	case KEYCTL_UNLINK: return keyctl_unlink(t, id, (int)a[2]);
	case KEYCTL_SEARCH: return ctl_search(t, id, (uint64_t)a[2], (uint64_t)a[3], (int)a[4]);
	case KEYCTL_READ: return ctl_read(t, id, (uint64_t)a[2], (size_t)a[3]);
	case KEYCTL_INSTANTIATE:
	case KEYCTL_INSTANTIATE_IOV:
		return (size_t)a[3] > PVX_KEY_PAYLOAD_MAX ? -EINVAL : -EPERM;
	case KEYCTL_REJECT:
		if (a[3] <= 0 || a[3] >= 4096 || a[3] == 512 /* ERESTARTSYS */)
			return -EINVAL;
		return -EPERM;
	case KEYCTL_NEGATE: return -EPERM;
	case KEYCTL_SET_REQKEY_KEYRING: return keyctl_set_reqkey(t, id);
	case KEYCTL_SET_TIMEOUT: return keyctl_set_timeout(t, id, (unsigned)a[2]);
	case KEYCTL_ASSUME_AUTHORITY: return id < 0 ? -EINVAL : id == 0 ? 0 : -ENOKEY;
	case KEYCTL_GET_SECURITY: {
		long r = keyctl_get_security(t, id);	/* "" */
		return put_out(t, (uint64_t)a[2], "", a[3] ? 1 : 0, r);
	}
	case KEYCTL_SESSION_TO_PARENT: return keyctl_session_to_parent(t);
	case KEYCTL_INVALIDATE: return keyctl_invalidate(t, id);
	case KEYCTL_MOVE: return keyctl_move(t, id, (int)a[2], (int)a[3], (unsigned)a[4]);
	case KEYCTL_CAPABILITIES: return ctl_capabilities(t, (uint64_t)a[1], (size_t)a[2]);
	default: return -EOPNOTSUPP;
	}
}

/* keyctl(2): one operation; the keys it let go of meanwhile go after it (keys_call_end). */
long sys_keyctl(struct task *t, const long a[6])
{
	long r = keyctl_op(t, a);

	keys_call_end();
	return r;
}
