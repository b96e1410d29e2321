// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/smaps, /proc/PID/smaps_rollup and /proc/PID/pagemap.
 *
 * smaps is Linux 6.12's show_smap(): the VMAs are pvx's (what the guest
 * mapped, as /proc/PID/maps lists them); what is resident (Rss, Pss, the
 * clean and dirty counts, Anonymous, Swap...) is the host's word on the
 * stub's mappings of the same ranges, read from the stub's own
 * /proc/<pid>/smaps, as getrusage and statm already take the stub's usage.
 * A host VMA that straddles two of pvx's (the host merged what pvx keeps
 * apart, e.g. by lock bits) is shared out by size. VmFlags are the host's
 * for the range, but for the bits pvx keeps itself (gd: the stack grows in
 * mm/mm.c; lo, lf: mlock is bookkeeping; sl: mseal). smaps_rollup sums
 * the same numbers, with Pss_Anon, Pss_File and Pss_Shmem split by what the
 * VMA maps (a private file mapping's anonymous pages counted as anon).
 *
 * pagemap is pagemap_read(): 8 bytes per page, the offset and count
 * multiples of 8 (EINVAL otherwise), nothing past the top of user space.
 * Inside the guest's VMAs an entry is the host's entry for the stub's page
 * with the PFN bits (0-54) cleared, as Linux clears them for a reader
 * without CAP_SYS_ADMIN (which the guest never has): present, swapped,
 * file/shared, exclusive, soft-dirty and uffd-wp bits. Outside them, and
 * above the guest's range where the stub itself lives, entries are 0: no
 * host address or page is ever seen.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pvx/hostcred.h"
#include "pvx/kernel.h"
#include "pvx/mm.h"
#include "pvx/file.h"
#include "pvx/task.h"
#include "sentry/kernel/procfs.h"
#include "sentry/platform/platform.h"

/* The kB fields of a VMA's smaps, in __show_smap()'s order (the rollup's Pss_* apart). */
static const char *const fields[] = { "Rss", "Pss", "Pss_Dirty", "Shared_Clean", "Shared_Dirty", "Private_Clean",
				      "Private_Dirty", "Referenced", "Anonymous", "KSM", "LazyFree", "AnonHugePages",
				      "ShmemPmdMapped", "FilePmdMapped", "Shared_Hugetlb", "Private_Hugetlb", "Swap",
				      "SwapPss", "Locked" };
enum { F_RSS, F_PSS, F_PSS_DIRTY, F_ANON = 8, F_LOCKED = 18, NF = 19 };

/* VmFlags mnemonics in bit order (show_smap_vma_flags). */
static const char *const vmflags[] = { "rd", "wr", "ex", "sh", "mr", "mw", "me", "ms", "gd", "um", "pf", "uw", "lo",
				       "io", "sr", "rr", "dc", "de", "lf", "ac", "nr", "ht", "sf", "ar", "wf", "dd",
				       "bt", "sd", "mm", "hg", "nh", "mg", "mt", "ui", "ss", "dp", "sl" };

struct host_vma {
	uint64_t start, end;
	uint64_t kb[NF];
	unsigned thp;
	uint64_t flags;	/* bit i: vmflags[i] */
};

static int flag_index(const char *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(vmflags); i++)
		if (!strcmp(vmflags[i], m))
			return (int)i;
	return -1;
}

/* The stub's /proc file (its smaps or pagemap): the sentry's to read, as the stub's parent or with its rights. */
static int open_stub_file(const struct task *p, const char *what)
{
	char path[64];

	if (!p->mm || !p->mm->as || p->mm->as->pid <= 0 || p->mm->as->pid == getpid())
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/%s", p->mm->as->pid, what);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : open_privileged(path, O_RDONLY | O_CLOEXEC);
}

/* The stub's VMAs inside the guest's range, with their numbers; *n of them, NULL when there is no stub to ask. */
static struct host_vma *host_smaps(const struct task *p, size_t *n)
{
	int fd = open_stub_file(p, "smaps");
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	struct host_vma *hv = NULL, *cur = NULL;
	size_t cap = 0, lsize = 0;
	char *line = NULL;	/* whole lines: a long file name the guest chose never reads as a line of its own */

	*n = 0;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (getline(&line, &lsize, f) > 0) {
		unsigned long s, e, v;
		char key[32];
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, ' ') > strchr(line, '-')) {
			cur = NULL;
			if (e > PVX_GUEST_TASK_SIZE || s >= e)
				continue;	/* the stub's own, never the guest's */
			if (*n == cap) {
				struct host_vma *m = realloc(hv, (cap = cap ? cap * 2 : 64) * sizeof(*hv));
				if (!m)
					break;
				hv = m;
			}
			cur = &hv[(*n)++];
			*cur = (struct host_vma){ .start = s, .end = e };
		} else if (cur && !strncmp(line, "VmFlags:", 8)) {
			for (char *save, *tok = strtok_r(line + 8, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
				int i = flag_index(tok);
				if (i >= 0)
					cur->flags |= 1UL << i;
			}
		} else if (cur && sscanf(line, "THPeligible: %lu", &v) == 1) {
			cur->thp = (unsigned)v;
		} else if (cur && sscanf(line, "%31[^:]: %lu kB", key, &v) == 2) {
			for (int i = 0; i < NF; i++)
				if (!strcmp(key, fields[i]))
					cur->kb[i] = v;
		}
	}
	free(line);
	fclose(f);
	return hv;
}

/* What of the host's VMAs falls in [start, end): their numbers, shared out by size; the flags of the first. */
static void gather(const struct host_vma *hv, size_t n, uint64_t start, uint64_t end, struct host_vma *out)
{
	bool first = true;

	*out = (struct host_vma){ .start = start, .end = end };
	for (size_t i = 0; i < n; i++) {
		uint64_t s = MAX(hv[i].start, start), e = MIN(hv[i].end, end);
		if (s >= e)
			continue;
		uint64_t part = e - s, whole = hv[i].end - hv[i].start;
		for (int k = 0; k < NF; k++)
			out->kb[k] += part == whole ? hv[i].kb[k] : (uint64_t)((unsigned __int128)hv[i].kb[k] * part / whole);
		if (first) {
			out->flags = hv[i].flags;
			out->thp = hv[i].thp;
			first = false;
		}
	}
}

/* The VmFlags line: the host's bits with pvx's own (gd, lo, lf, sl) as the VMA says them. */
static void print_flags(FILE *f, const struct vma *v, uint64_t host, bool main_stack)
{
	const struct { const char *m; bool on; } own[] = {
		{ "gd", v->flags & MAP_GROWSDOWN }, { "lo", v->flags & (VMA_LOCKED | MAP_LOCKED) },
		{ "lf", v->flags & VMA_LOCKONFAULT }, { "sl", v->flags & VMA_SEALED },
	};

	if (main_stack)	/* pvx maps it MAP_STACK, which the host marks nh; exec's stack on Linux is not */
		host &= ~(1UL << flag_index("nh"));
	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		uint64_t bit = 1UL << flag_index(own[i].m);
		host = own[i].on ? host | bit : host & ~bit;
	}
	fputs("VmFlags:", f);
	for (size_t i = 0; i < ARRAY_SIZE(vmflags); i++)
		if (host & (1UL << i))
			fprintf(f, " %s", vmflags[i]);
	fputs(" \n", f);
}

static void put_kb(FILE *f, const char *name, uint64_t kb)
{
	char label[24];

	snprintf(label, sizeof(label), "%s:", name);
	if (strlen(label) >= 16)	/* "Private_Hugetlb: " is one wider: its number one narrower */
		fprintf(f, "%s %7lu kB\n", label, (unsigned long)kb);
	else
		fprintf(f, "%-16s%8lu kB\n", label, (unsigned long)kb);
}

long procfs_smaps(struct task *p, bool rollup, char **out, size_t *len)
{
	size_t n;
	struct host_vma *hv = host_smaps(p, &n), g, sum = { 0 };
	uint64_t pss_anon = 0, pss_file = 0, pss_shmem = 0, first = 0, last = 0;
	FILE *f = open_memstream(out, len);

	if (!f) {
		free(hv);
		return -ENOMEM;
	}
	vma_for_each(v, &p->mm->vmas) {
		gather(hv, n, v->start, v->end, &g);
		/* smap_account(): Locked is the Pss of a VM_LOCKED VMA */
		g.kb[F_LOCKED] = v->flags & (VMA_LOCKED | MAP_LOCKED) ? g.kb[F_PSS] : 0;
		if (!first)
			first = v->start;
		last = v->end;
		for (int k = 0; k < NF; k++)
			sum.kb[k] += g.kb[k];
		uint64_t anon = v->file ? MIN(g.kb[F_ANON], g.kb[F_PSS]) : g.kb[F_PSS];
		pss_anon += anon;
		if (v->file && v->file->in_ram)
			pss_shmem += g.kb[F_PSS] - anon;
		else
			pss_file += g.kb[F_PSS] - anon;
		if (rollup)
			continue;
		procfs_maps_line(f, p, v);
		put_kb(f, "Size", (v->end - v->start) >> 10);
		put_kb(f, "KernelPageSize", PAGE_SIZE >> 10);
		put_kb(f, "MMUPageSize", PAGE_SIZE >> 10);
		for (int k = 0; k < NF; k++)
			put_kb(f, fields[k], g.kb[k]);
		fprintf(f, "THPeligible:    %8u\n", g.thp);
		print_flags(f, v, g.flags, v->end == p->mm->stack_top);
	}
	if (rollup) {
		/* show_vma_header_prefix() of the whole span, padded to its column, then [rollup] */
		int w = fprintf(f, "%08lx-%08lx ---p 00000000 00:00 0", (unsigned long)first, (unsigned long)last);
		fprintf(f, "%*s[rollup]\n", MAX(72 - w, 0) + 1, "");
		for (int k = 0; k < NF; k++) {
			put_kb(f, fields[k], sum.kb[k]);
			if (k == F_PSS_DIRTY) {
				put_kb(f, "Pss_Anon", pss_anon);
				put_kb(f, "Pss_File", pss_file);
				put_kb(f, "Pss_Shmem", pss_shmem);
			}
		}
	}
	free(hv);
	return fclose(f) ? -ENOMEM : 0;
}

/*
 * pagemap's open files: the host fd of each (an empty read-only memfd,
 * for the position and readiness) names by its inode the process and mm
 * it was opened on. A read finds the process again by its pid and reads
 * nothing (0, as Linux once the mm is gone) when it has exited or
 * exec'd another mm since.
 */
struct pagemap_open {
	uint64_t ino;
	int pid;
	const struct mm *mm;
	struct pagemap_open *next;
};
static struct pagemap_open *pagemaps;

static struct pagemap_open **pagemap_find(const struct file *f)
{
	struct stat st;

	if (fstat(f->host_fd, &st) < 0)
		return NULL;
	for (struct pagemap_open **o = &pagemaps; *o; o = &(*o)->next)
		if ((*o)->ino == st.st_ino)
			return o;
	return NULL;
}

#define PM_ENTRY_BYTES 8
#define PM_PFN_MASK ((1UL << 55) - 1)
#define PM_TASK_SIZE ((1UL << 47) - PAGE_SIZE)	/* x86-64's TASK_SIZE_MAX: where pagemap ends */

/* Entries for pages [vpn, vpn + n) of p's guest into out: the host's for mapped pages, PFNs cleared. */
static void pagemap_fill(const struct task *p, int host, uint64_t vpn, size_t n, uint64_t *out)
{
	memset(out, 0, n * PM_ENTRY_BYTES);
	uint64_t start = vpn * PAGE_SIZE, end = (vpn + n) * PAGE_SIZE;
	for (const struct vma *v = vma_first_above(&p->mm->vmas, start); host >= 0 && v && v->start < end;
	     v = vma_next(&p->mm->vmas, v)) {
		uint64_t s = MAX(v->start, start), e = MIN(v->end, end);
		uint64_t *dst = out + (s - start) / PAGE_SIZE;
		size_t bytes = (e - s) / PAGE_SIZE * PM_ENTRY_BYTES;
		ssize_t got = pread(host, dst, bytes, (off_t)(s / PAGE_SIZE * PM_ENTRY_BYTES));
		if (got < 0)
			got = 0;
		memset((char *)dst + got, 0, bytes - (size_t)got);
		for (size_t i = 0; i < (size_t)got / PM_ENTRY_BYTES; i++)
			dst[i] &= ~PM_PFN_MASK;	/* never a host frame number */
	}
}

/* pagemap_read(): aligned offset and count, entries from the offset's page up to the top of user space. */
static long pagemap_read(struct task *t __unused, struct file *f, void *buf, size_t count, off_t off, bool positional)
{
	struct pagemap_open **o = pagemap_find(f);

	if (!positional && (off = lseek(f->host_fd, 0, SEEK_CUR)) < 0)
		return neg_errno();
	struct task *p = o ? task_find((*o)->pid) : NULL;
	if (!p || p->state == TASK_ZOMBIE || p->mm != (*o)->mm)
		return 0;	/* the mm is gone: !mmget_not_zero() */
	/* rw_verify_area(): a negative offset or one count would take past the largest (no FMODE_UNSIGNED_OFFSET) */
	if (off < 0 || count > (uint64_t)INT64_MAX - (uint64_t)off)
		return -EINVAL;
	if ((off % PM_ENTRY_BYTES) || (count % PM_ENTRY_BYTES))
		return -EINVAL;
	uint64_t vpn = (uint64_t)off / PM_ENTRY_BYTES, top = PM_TASK_SIZE / PAGE_SIZE;
	if (!count || vpn >= top)
		return 0;
	size_t n = MIN(count / PM_ENTRY_BYTES, top - vpn);
	int host = open_stub_file(p, "pagemap");
	pagemap_fill(p, host, vpn, n, buf);
	if (host >= 0)
		close(host);
	if (!positional && lseek(f->host_fd, off + (off_t)(n * PM_ENTRY_BYTES), SEEK_SET) < 0)
		return neg_errno();
	return (long)(n * PM_ENTRY_BYTES);
}

static void pagemap_release(struct file *f)
{
	struct pagemap_open **o = pagemap_find(f), *gone = o ? *o : NULL;

	if (gone) {
		*o = gone->next;
		free(gone);
	}
	procfs_file_ops.release(f);
}

static struct file_ops pagemap_ops;

long procfs_pagemap_open(struct task *t __unused, struct task *p, const struct file_ops **kind)
{
	struct pagemap_open *o = malloc(sizeof(*o));
	struct stat st;

	if (!o)
		return -ENOMEM;
	long fd = procfs_text_fd("", 0);
	if (fd < 0 || fstat((int)fd, &st) < 0) {
		free(o);
		if (fd >= 0)
			close((int)fd);
		return fd < 0 ? fd : -EIO;
	}
	*o = (struct pagemap_open){ st.st_ino, p->pid, p->mm, pagemaps };
	pagemaps = o;
	if (!pagemap_ops.read) {
		pagemap_ops = procfs_file_ops;
		pagemap_ops.read = pagemap_read;
		pagemap_ops.release = pagemap_release;
		pagemap_ops.rw_in_guest_mm = NULL;	/* entries are made by the sentry, not in the host file */
		pagemap_ops.rw_vec = NULL;
	}
	*kind = &pagemap_ops;
	return fd;
}
