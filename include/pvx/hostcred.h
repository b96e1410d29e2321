/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sentry's host file identity (the privilege model, README "Security").
 *
 * pvx run as root with the host's / as the guest's root gives the guest
 * nobody's file access: every sentry thread has fsuid and fsgid 65534 and
 * no supplementary groups, so every host call made for the guest is checked
 * against nobody's permissions (/etc/shadow is EACCES). The kernel drops the
 * file capabilities (CAP_DAC_OVERRIDE, CAP_CHOWN, CAP_FOWNER, CAP_MKNOD...)
 * from the effective set with the fsuid; the others (CAP_SYS_PTRACE to run
 * the stubs) stay. --privileged keeps root's file access; --root DIR keeps it
 * inside DIR, where path resolution confines the guest.
 */
#ifndef PVX_HOSTCRED_H
#define PVX_HOSTCRED_H

#include <stdbool.h>

#include "pvx/common.h"

#define PVX_NOBODY 65534

/* Take nobody's file identity; on the main thread before any other thread or stub exists. */
long hostcred_drop_files(void) __must_check;

/*
 * Root's file access again on the calling thread only (fsuid is per
 * thread), for the sentry's own files that need it (/proc/<stub pid>/...,
 * its private staging directory); never for a guest path. Nests; every
 * raise is paired with a lower on the same thread.
 */
void hostcred_raise(void);
void hostcred_lower(void);

/*
 * In a child about to exec a stub: root's file access back (see
 * hostcred.c). Raw syscalls only, no write to memory: safe in a vfork child.
 */
void hostcred_spawn_child(void);

/* open(2) of a sentry-internal host path with root's file access. */
int open_privileged(const char *path, int flags);

#endif
