/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sandbox's key retention service (add_key(2), request_key(2),
 * keyctl(2)), emulated in the sentry and never the host's keyrings:
 * sentry/kernel/keys.c (keys, keyrings, quotas, permissions, searches),
 * keys_task.c (the special keyrings and lookups),
 * keys_ctl.c (the operations) and keys_proc.c (/proc/keys, /proc/key-users).
 * Callers hold the sentry lock.
 */
#ifndef PVX_KEYS_H
#define PVX_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pvx/task.h"

#define PVX_KEY_TYPE_MAX 32		/* key_get_type_from_user(): the type with its NUL */
#define PVX_KEY_DESC_MAX 4096		/* KEY_MAX_DESC_SIZE, with the NUL */
#define PVX_KEY_PAYLOAD_MAX (1024 * 1024 - 1)	/* add_key(2): "plen > 1024 * 1024 - 1" is EINVAL */
#define PVX_KEY_UPDATE_MAX 4096		/* keyctl_update_key(): "plen > PAGE_SIZE" is EINVAL */
#define PVX_KEY_CALLOUT_MAX 4096	/* request_key(2): callout info up to PAGE_SIZE */

/* The creation hooks of the task and process lifetimes (see keys.c). */
void keys_clone_task(struct task *child, const struct task *parent, bool new_process);
void keys_exec(struct task *t);
void keys_task_free(struct task *t);
void keys_process_free(struct process *p);
/* The end of a keys syscall: the user keyrings it replaced go now (keys_task.c). Under the sentry lock. */
void keys_call_end(void);

/* add_key(2) with its arguments copied in: the new or updated key's serial, or -errno. */
long keys_add(struct task *t, const char *type, const char *desc, const void *payload, size_t plen, int ringid);
/* request_key(2): a key found in t's keyrings (linked into destid if given), else -ENOKEY (no upcall). */
long keys_request(struct task *t, const char *type, const char *desc, const char *callout, int destid);

/* keyctl(2)'s operations (keys_ctl.c); each returns what the syscall returns, or -errno. */
long keyctl_get_keyring_id(struct task *t, int id, bool create);
long keyctl_join_session(struct task *t, const char *name);
long keyctl_update(struct task *t, int id, const void *payload, size_t plen);
long keyctl_revoke(struct task *t, int id);
long keyctl_chown(struct task *t, int id, unsigned uid, unsigned gid);
long keyctl_setperm(struct task *t, int id, uint32_t perm);
/* KEYCTL_DESCRIBE and KEYCTL_READ: a malloc'd copy to hand out in *out (*len bytes; NULL if none). */
long keyctl_describe(struct task *t, int id, char **out, size_t *len);
long keyctl_read(struct task *t, int id, size_t buflen, char **out, size_t *len);
long keyctl_clear(struct task *t, int id);
long keyctl_link(struct task *t, int id, int ringid);
long keyctl_unlink(struct task *t, int id, int ringid);
long keyctl_search(struct task *t, int ringid, const char *type, const char *desc, int destid);
long keyctl_set_reqkey(struct task *t, int defl);
long keyctl_set_timeout(struct task *t, int id, unsigned timeout);
long keyctl_invalidate(struct task *t, int id);
long keyctl_get_security(struct task *t, int id);
long keyctl_session_to_parent(struct task *t);
long keyctl_move(struct task *t, int id, int from, int to, unsigned flags);

/* /proc/keys, /proc/key-users and /proc/sys/kernel/keys/NAME (rel as procfs gives it): -ENOENT otherwise. */
long keys_proc_text(struct task *t, const char *rel, char **text, size_t *len);
extern const char *const keys_sysctl_names[];

#endif
