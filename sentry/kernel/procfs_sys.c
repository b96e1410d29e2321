// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/sys and /proc/config.gz: the sandbox's kernel as a program asks
 * about it. Each value is the limit pvx itself enforces (pid_max and
 * threads-max from the task table, nr_open from the fd table, pipe-max-size
 * from the pipe code, max_map_count and mmap_min_addr from mm/,
 * overcommit_memory 2 for --memory's strict commit accounting), the
 * sandbox's own name (hostname, domainname, boot_id), or the host's where the
 * host is the one enforcing (file-max, the kernel's release and version).
 * Everything is read-only: an open for writing is EACCES, as for a process
 * that is not root. The kernel's other sysctls do not exist (ENOENT).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "pvx/aio.h"
#include "pvx/events.h"
#include "pvx/file.h"
#include "pvx/guest_layout.h"
#include "pvx/kernel.h"
#include "pvx/mm.h"
#include "pvx/mqueue.h"
#include "pvx/uts.h"
#include "pvx/ipc.h"
#include "pvx/keys.h"
#include "sentry/kernel/procfs.h"

/* The first line of host file path into buf, with its newline; -ENOENT when the host lacks it. */
static long host_value(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -ENOENT;
	buf[n] = 0;
	return 0;
}

/* A random version 4 UUID, as the kernel's generate_random_uuid() prints it. */
static void random_uuid(char *buf, size_t size)
{
	unsigned char u[16] = { 0 };

	if (getrandom(u, sizeof(u), 0) != sizeof(u))
		for (size_t i = 0; i < sizeof(u); i++)	/* never: getrandom of 16 bytes does not fail */
			u[i] = (unsigned char)(rand() & 0xff);
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* One value of /proc/sys: its path under /proc/sys and what writes its text. */
struct sysctl {
	const char *path;
	long (*gen)(const struct sysctl *s, char *buf, size_t size);
	long value;
};

static long gen_number(const struct sysctl *s, char *buf, size_t size)
{
	snprintf(buf, size, "%ld\n", s->value);
	return 0;
}

static long gen_host(const struct sysctl *s, char *buf, size_t size)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/sys/%s", s->path);
	return host_value(path, buf, size);
}

static long gen_uname(const struct sysctl *s, char *buf, size_t size)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -EIO;
	snprintf(buf, size, "%s\n", s->value == 0 ? u.sysname : s->value == 1 ? u.release : u.version);
	return 0;
}

static long gen_uts(const struct sysctl *s, char *buf, size_t size)
{
	snprintf(buf, size, "%s\n", s->value == UTS_NODENAME ? uts_nodename() : uts_domainname());
	return 0;
}

/* The sandbox's boot: one id for the whole run, never the host's. */
static long gen_boot_id(const struct sysctl *s __unused, char *buf, size_t size)
{
	static char id[40];

	if (!id[0])
		random_uuid(id, sizeof(id));
	snprintf(buf, size, "%s", id);
	return 0;
}

/* "uuid: a new UUID every time it is read" (proc_do_uuid). */
static long gen_uuid(const struct sysctl *s __unused, char *buf, size_t size)
{
	random_uuid(buf, size);
	return 0;
}

static long gen_pipe_max(const struct sysctl *s __unused, char *buf, size_t size)
{
	snprintf(buf, size, "%lu\n", pipe_max_size());
	return 0;
}

/* Where a core dump goes (sentry/kernel/coredump.c): "core" in the dying process's cwd. */
static long gen_core_pattern(const struct sysctl *s __unused, char *buf, size_t size)
{
	snprintf(buf, size, "core\n");
	return 0;
}

/* The IPC namespace's limits (sentry/kernel/ipc_proc.c). */
static long gen_ipc(const struct sysctl *s, char *buf, size_t size)
{
	char rel[64], *text = NULL;
	size_t len = 0;

	snprintf(rel, sizeof(rel), "/sys/%s", s->path);
	long r = ipc_proc_text(rel, &text, &len);
	if (!r)
		snprintf(buf, size, "%.*s", (int)len, text);
	free(text);
	return r;
}

/* The key quotas (sentry/kernel/keys_proc.c). */
static long gen_keys(const struct sysctl *s, char *buf, size_t size)
{
	char rel[64], *text = NULL;
	size_t len = 0;

	snprintf(rel, sizeof(rel), "/sys/%s", s->path);
	long r = keys_proc_text(NULL, rel, &text, &len);
	if (!r)
		snprintf(buf, size, "%.*s", (int)len, text);
	free(text);
	return r;
}

/* Events reserved by the sandbox's AIO contexts (sentry/kernel/aio.c). */
static long gen_aio_nr(const struct sysctl *s __unused, char *buf, size_t size)
{
	snprintf(buf, size, "%lu\n", aio_nr());
	return 0;
}

static const struct sysctl sysctls[] = {
	{ "fs/aio-max-nr", gen_number, PVX_AIO_MAX_NR },	/* sentry/kernel/aio.c */
	{ "fs/aio-nr", gen_aio_nr, 0 },
	{ "fs/file-max", gen_host, 0 },	/* the host's: pvx keeps no count of its own */
	{ "fs/inotify/max_queued_events", gen_host, 0 },	/* per instance: the host's queue */
	{ "fs/inotify/max_user_instances", gen_number, PVX_INOTIFY_INSTANCES },
	{ "fs/inotify/max_user_watches", gen_number, PVX_INOTIFY_WATCHES },
	{ "fs/mqueue/msg_default", gen_number, PVX_MQ_MSG_DEFAULT },	/* sentry/kernel/mqueue.c */
	{ "fs/mqueue/msg_max", gen_number, PVX_MQ_MSG_MAX },
	{ "fs/mqueue/msgsize_default", gen_number, PVX_MQ_MSGSIZE_DEFAULT },
	{ "fs/mqueue/msgsize_max", gen_number, PVX_MQ_MSGSIZE_MAX },
	{ "fs/mqueue/queues_max", gen_number, PVX_MQ_QUEUES_MAX },
	{ "fs/nr_open", gen_number, PVX_NR_OPEN },	/* the fd table's size: RLIMIT_NOFILE's cap */
	{ "fs/pipe-max-size", gen_pipe_max, 0 },
	{ "fs/pipe-user-pages-hard", gen_host, 0 },	/* the host's: pipes are host pipes the sentry owns, */
	{ "fs/pipe-user-pages-soft", gen_host, 0 },	/* counted by the host against its user */
	{ "kernel/core_pattern", gen_core_pattern, 0 },
	{ "kernel/core_uses_pid", gen_number, 0 },	/* the core file is "core", never "core.PID" */
	{ "kernel/dmesg_restrict", gen_number, 1 },	/* syslog(2) is EPERM for every guest */
	{ "kernel/domainname", gen_uts, UTS_DOMAINNAME },
	{ "kernel/hostname", gen_uts, UTS_NODENAME },
	{ "kernel/keys/gc_delay", gen_keys, 0 },
	{ "kernel/keys/maxbytes", gen_keys, 0 },
	{ "kernel/keys/maxkeys", gen_keys, 0 },
	{ "kernel/keys/root_maxbytes", gen_keys, 0 },
	{ "kernel/keys/root_maxkeys", gen_keys, 0 },
	{ "kernel/msgmax", gen_ipc, 0 },
	{ "kernel/msgmnb", gen_ipc, 0 },
	{ "kernel/msgmni", gen_ipc, 0 },
	{ "kernel/osrelease", gen_uname, 1 },
	{ "kernel/ostype", gen_uname, 0 },
	{ "kernel/pid_max", gen_number, PVX_MAX_TASKS + 1 },	/* pids are below it: 1..PVX_MAX_TASKS */
	{ "kernel/random/boot_id", gen_boot_id, 0 },
	{ "kernel/random/entropy_avail", gen_host, 0 },	/* the host's pool: /dev/[u]random are the host's */
	{ "kernel/random/poolsize", gen_host, 0 },
	{ "kernel/random/uuid", gen_uuid, 0 },
	{ "kernel/sem", gen_ipc, 0 },
	{ "kernel/shmall", gen_ipc, 0 },
	{ "kernel/shmmax", gen_ipc, 0 },
	{ "kernel/shmmni", gen_ipc, 0 },
	{ "kernel/tainted", gen_number, 0 },	/* the sandbox's kernel: nothing taints it */
	{ "kernel/threads-max", gen_number, PVX_MAX_TASKS },
	{ "kernel/version", gen_uname, 2 },
	{ "vm/max_map_count", gen_number, PVX_MAX_MAP_COUNT },
	{ "vm/mmap_min_addr", gen_number, PVX_GUEST_MIN },
	{ "vm/overcommit_memory", gen_number, 2 },	/* --memory is strict commit accounting */
};

/* list_dir's subdirectories, for getdents' d_type (under the sentry lock, as every listing). */
static const char *subdirs[ARRAY_SIZE(sysctls)];
static size_t nsubdirs;

static unsigned char sysctl_type(const char *name)
{
	for (size_t i = 0; i < nsubdirs; i++)
		if (!strcmp(subdirs[i], name))
			return DT_DIR;
	return DT_REG;
}

/*
 * The names directly inside directory dir ("" for /proc/sys itself), each
 * once: files and subdirectories alike, as the table's paths give them.
 */
static long list_dir(const char *dir)
{
	static char names[ARRAY_SIZE(sysctls)][32];
	const char *list[ARRAY_SIZE(sysctls)];

	nsubdirs = 0;
	size_t n = 0, dlen = strlen(dir);
	char guest[96];

	for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++) {
		const char *p = sysctls[i].path;
		if (dlen && (strncmp(p, dir, dlen) || p[dlen] != '/'))
			continue;
		p += dlen ? dlen + 1 : 0;
		size_t len = strcspn(p, "/");
		snprintf(names[n], sizeof(names[n]), "%.*s", (int)len, p);
		bool dup = false;
		for (size_t k = 0; k < n; k++)
			dup |= !strcmp(list[k], names[n]);
		if (!dup) {
			list[n] = names[n];
			if (p[len] == '/' && nsubdirs < ARRAY_SIZE(subdirs))
				subdirs[nsubdirs++] = names[n];
			n++;
		}
	}
	if (!n)
		return -ENOENT;
	snprintf(guest, sizeof(guest), "/proc/sys%s%s", dlen ? "/" : "", dir);
	return procfs_dir_fd_typed(guest, list, n, sysctl_type);
}

/* See sentry/kernel/procfs.h. */
long procfs_sys_open(const char *rest, const struct file_ops **kind)
{
	char text[512];

	if (!rest[0])
		return list_dir("");
	if (rest[0] != '/')
		return -ENOENT;
	rest++;
	for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++) {
		if (strcmp(rest, sysctls[i].path))
			continue;
		long r = sysctls[i].gen(&sysctls[i], text, sizeof(text));
		if (r < 0)
			return r;
		*kind = &procfs_file_ops;
		return procfs_text_fd(text, strlen(text));
	}
	return strlen(rest) < 64 ? list_dir(rest) : -ENOENT;
}

/*
 * /proc/config.gz's options: each is y when the table emulates the
 * syscalls that need it, "is not set" otherwise, so a test suite that reads
 * the config (LTP's tst_kconfig) skips what pvx does not do, as on a
 * kernel built without it. nr[] ends at -1.
 */
static const struct kconfig {
	const char *name;
	int nr[4];
} kconfigs[] = {
	{ "CONFIG_ADVISE_SYSCALLS", { 28, 221, -1 } },	/* madvise, fadvise64 */
	{ "CONFIG_AIO", { 206, 209, -1 } },	/* io_setup, io_submit */
	{ "CONFIG_BPF_SYSCALL", { 321, -1 } },
	{ "CONFIG_BSD_PROCESS_ACCT", { 163, -1 } },	/* acct */
	{ "CONFIG_CACHESTAT_SYSCALL", { 451, -1 } },
	{ "CONFIG_CROSS_MEMORY_ATTACH", { 310, 311, -1 } },	/* process_vm_readv/writev */
	{ "CONFIG_EPOLL", { 291, -1 } },
	{ "CONFIG_EVENTFD", { 290, -1 } },
	{ "CONFIG_FANOTIFY", { 300, -1 } },
	{ "CONFIG_FHANDLE", { 303, 304, -1 } },	/* name_to_handle_at, open_by_handle_at */
	{ "CONFIG_FILE_LOCKING", { 73, -1 } },	/* flock */
	{ "CONFIG_FUTEX", { 202, -1 } },
	{ "CONFIG_INOTIFY_USER", { 294, -1 } },
	{ "CONFIG_IO_URING", { 425, -1 } },
	{ "CONFIG_KCMP", { 312, -1 } },
	{ "CONFIG_KEYS", { 248, 250, -1 } },	/* add_key, keyctl */
	{ "CONFIG_MEMBARRIER", { 324, -1 } },
	{ "CONFIG_MEMFD_CREATE", { 319, -1 } },
	{ "CONFIG_MULTIUSER", { 105, -1 } },	/* setuid */
	{ "CONFIG_NUMA", { 237, 238, 239, -1 } },	/* mbind, set/get_mempolicy */
	{ "CONFIG_PERF_EVENTS", { 298, -1 } },
	{ "CONFIG_POSIX_MQUEUE", { 240, -1 } },	/* mq_open */
	{ "CONFIG_POSIX_TIMERS", { 222, -1 } },	/* timer_create */
	{ "CONFIG_QUOTA", { 179, -1 } },	/* quotactl */
	{ "CONFIG_RSEQ", { 334, -1 } },
	{ "CONFIG_SECCOMP", { 317, -1 } },
	{ "CONFIG_SIGNALFD", { 289, -1 } },
	{ "CONFIG_SWAP", { 167, -1 } },	/* swapon */
	{ "CONFIG_SYSFS_SYSCALL", { 139, -1 } },
	{ "CONFIG_SYSVIPC", { 29, 64, 68, -1 } },	/* shmget, semget, msgget */
	{ "CONFIG_TIMERFD", { 283, -1 } },
	{ "CONFIG_USELIB", { 134, -1 } },
	{ "CONFIG_USERFAULTFD", { 323, -1 } },
};

/* What is always so of the sandbox's kernel, whatever its table. */
static const char kconfig_fixed[] =
	"#\n# Automatically generated file; DO NOT EDIT.\n# pvx sandbox kernel configuration\n#\n"
	"CONFIG_64BIT=y\nCONFIG_X86_64=y\nCONFIG_X86=y\nCONFIG_MMU=y\nCONFIG_SMP=y\n"
	"CONFIG_PROC_FS=y\nCONFIG_PROC_SYSCTL=y\nCONFIG_SYSCTL=y\nCONFIG_IKCONFIG=y\nCONFIG_IKCONFIG_PROC=y\n"
	"CONFIG_SHMEM=y\nCONFIG_UNIX=y\nCONFIG_INET=y\nCONFIG_IPV6=y\nCONFIG_NET=y\n"
	"CONFIG_DNOTIFY=y\n"
	"# CONFIG_MODULES is not set\n# CONFIG_CGROUPS is not set\n# CONFIG_NAMESPACES is not set\n"
	"# CONFIG_USER_NS is not set\n# CONFIG_PID_NS is not set\n# CONFIG_NET_NS is not set\n"
	"# CONFIG_UTS_NS is not set\n# CONFIG_IPC_NS is not set\n# CONFIG_TIME_NS is not set\n"
	"# CONFIG_KSM is not set\n# CONFIG_TRANSPARENT_HUGEPAGE is not set\n# CONFIG_HUGETLBFS is not set\n"
	"# CONFIG_BLK_DEV_LOOP is not set\n";

/* The table's text for kconfigs and the fixed lines, into buf (NUL-terminated); its length. */
static size_t kconfig_text(char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "%s", kconfig_fixed);

	for (size_t i = 0; i < ARRAY_SIZE(kconfigs) && n < size; i++) {
		bool y = true;
		for (const int *nr = kconfigs[i].nr; *nr >= 0; nr++)
			y &= kernel_syscall_implemented(*nr);
		n += (size_t)snprintf(buf + n, size - n, y ? "%s=y\n" : "# %s is not set\n", kconfigs[i].name);
	}
	return MIN(n, size - 1);
}

/* CRC-32 (IEEE, reflected), as gzip's trailer wants it. */
static uint32_t crc32_ieee(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void put_le(unsigned char *p, uint32_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * /proc/config.gz: the text above in a gzip member (RFC 1952) of stored
 * deflate blocks (RFC 1951, BTYPE 00), so any gunzip or zlib reads it and
 * pvx needs no compressor.
 */
long procfs_config_open(const struct file_ops **kind)
{
	static char text[8192];
	static unsigned char gz[sizeof(text) + 64];
	size_t len = kconfig_text(text, sizeof(text)), o = 0;
	static const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };

	memcpy(gz, header, sizeof(header));
	o = sizeof(header);
	for (size_t done = 0; done < len || !done;) {
		size_t chunk = MIN(len - done, (size_t)65535);
		gz[o++] = done + chunk == len;	/* BFINAL, BTYPE 00 */
		put_le(gz + o, (uint32_t)chunk, 2);
		put_le(gz + o + 2, (uint32_t)(~chunk & 0xffff), 2);
		o += 4;
		memcpy(gz + o, text + done, chunk);
		o += chunk;
		done += chunk;
		if (!chunk)
			break;
	}
	put_le(gz + o, crc32_ieee((const unsigned char *)text, len), 4);
	put_le(gz + o + 4, (uint32_t)len, 4);
	o += 8;
	*kind = &procfs_file_ops;
	return procfs_text_fd((const char *)gz, o);
}
