// SPDX-License-Identifier: GPL-2.0
/*
 * System V shared memory (Linux's ipc/shm.c): a segment is a memfd in the
 * sentry (a vma_file, charged once to the sandbox's memory bound when it is
 * made, as shmem_file_setup() accounts it), and shmat maps it MAP_SHARED
 * through mm/ like a shared anonymous mapping, so that fork, exec, exit and
 * munmap treat it as Linux's VMAs: every VMA holds a reference and the
 * segment one more, so shm_nattch is the file's references minus one, as
 * Linux counts shm VMAs (shm_open/shm_close). A segment removed while
 * attached (SHM_DEST, key IPC_PRIVATE) goes when its last VMA does.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include "pvx/ipc.h"
#include "pvx/log.h"

struct shm_seg {
	struct ipc_obj perm;	/* first: the table holds &perm */
	uint64_t size;
	struct vma_file *file;
	long atime, dtime, ctime;
	int cpid, lpid;
};

static struct ipc_ids shm_ids = { .limit = PVX_SHMMNI };
static uint64_t shm_tot;	/* pages of all segments (shm_info.shm_tot, bounded by SHMALL) */
static uint64_t shm_locked;	/* pages locked with SHM_LOCK, against RLIMIT_MEMLOCK */

static uint64_t pages(uint64_t size)
{
	return size / PAGE_SIZE + !!(size % PAGE_SIZE);
}

static struct shm_seg *seg_of(struct ipc_obj *o)
{
	return (struct shm_seg *)o;
}

static uint64_t nattch(const struct shm_seg *s)
{
	return (uint64_t)(s->file->refs - s->file->pins) - 1;
}

/* shm_destroy(): out of the table, its pages given back when the last mapping of the memfd goes. */
static void destroy(struct shm_seg *s)
{
	ipc_del(&shm_ids, &s->perm);
	shm_tot -= pages(s->size);
	if (s->perm.mode & SHM_LOCKED)
		shm_locked -= pages(s->size);
	s->file->owner = NULL;
	s->file->unref = NULL;
	vma_file_put(s->file);
	free(s);
}

/* A VMA of the segment went (munmap, shmdt, exit, exec): shm_close(). */
static void seg_unref(struct vma_file *f)
{
	struct shm_seg *s = f->owner;

	s->dtime = ipc_now();
	if (f->refs - f->pins == 1 && (s->perm.mode & SHM_DEST))
		destroy(s);
}

/* newseg(): the checks in Linux's order, the memfd, the id. */
static long newseg(struct task *t, int key, uint64_t size, int flags)
{
	uint64_t n = pages(size);
	long r;

	if (flags & SHM_HUGETLB)
		return -ENOSYS;	/* hugetlb_file_setup() without CONFIG_HUGETLBFS */
	if (size < 1 || size > PVX_SHMMAX)
		return -EINVAL;
	if (size > INT64_MAX)
		return -EINVAL;	/* shmem_file_setup(): "size > MAX_LFS_FILESIZE" */
	if (shm_tot + n < shm_tot || shm_tot + n > PVX_SHMALL)
		return -ENOSPC;
	if (shm_ids.in_use >= shm_ids.limit)
		return -ENOSPC;
	struct shm_seg *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if ((r = mm_shmem_file(n * PAGE_SIZE, &s->file))) {
		free(s);
		return r;
	}
	if ((r = ipc_add(&shm_ids, &s->perm, key, flags)) < 0) {
		vma_file_put(s->file);
		free(s);
		return r;
	}
	s->file->owner = s;
	s->file->unref = seg_unref;
	s->size = size;
	s->ctime = ipc_now();
	s->cpid = t->proc->pid;
	shm_tot += n;
	return r;
}

/* shmget(2): ipcget() with shm_more_checks ("EINVAL ... size is greater than the size of that segment"). */
long shm_get(struct task *t, int key, uint64_t size, int flags)
{
	if (key == IPC_PRIVATE)
		return newseg(t, key, size, flags);
	struct ipc_obj *o = ipc_find_key(&shm_ids, key);
	if (!o)
		return flags & IPC_CREAT ? newseg(t, key, size, flags) : -ENOENT;
	if ((flags & IPC_CREAT) && (flags & IPC_EXCL))
		return -EEXIST;
	if (seg_of(o)->size < size)
		return -EINVAL;
	long r = ipc_perms(o, flags);
	return r ? r : o->id;
}

/* do_shmat(): SHM_RND to SHMLBA (a page on x86), SHM_REMAP, SHM_RDONLY, SHM_EXEC; *out the address. */
long shm_attach(struct task *t, int id, uint64_t addr, int flags, uint64_t *out)
{
	int prot = PROT_READ | PROT_WRITE, acc = S_IRUGO | S_IWUGO, mflags = MAP_SHARED;

	if (id < 0)
		return -EINVAL;
	if (addr) {
		if (addr & (PAGE_SIZE - 1)) {
			if (!(flags & SHM_RND))
				return -EINVAL;
			addr &= ~(uint64_t)(PAGE_SIZE - 1);
			if (!addr && (flags & SHM_REMAP))
				return -EINVAL;
		}
		mflags |= MAP_FIXED;
	} else if (flags & SHM_REMAP) {
		return -EINVAL;
	}
	if (flags & SHM_RDONLY) {
		prot = PROT_READ;
		acc = S_IRUGO;
		mflags |= PVX_MAP_NOWRITE;
	}
	if (flags & SHM_EXEC) {
		prot |= PROT_EXEC;
		acc |= S_IXUGO;
	}
	struct ipc_obj *o = ipc_lookup(&shm_ids, id);
	if (!o)
		return -EINVAL;
	long r = ipc_perms(o, acc);
	if (r)
		return r;
	struct shm_seg *s = seg_of(o);
	if (addr && !(flags & SHM_REMAP)) {
		if (addr + s->size < addr || !vma_range_free(&t->mm->vmas, addr, PAGE_ALIGN_UP(addr + s->size)))
			return -EINVAL;
	}
	struct vma_file *f = s->file;
	f->refs++;	/* SHM_REMAP over its own last mapping must not destroy it meanwhile */
	mm_set_rlimits(t->mm, t->proc->rlim);	/* do_mmap(): RLIMIT_AS holds an attachment too */
	r = mm_mmap_vfile(t->mm, addr, s->size, prot, mflags, f, 0);
	if (r >= 0) {
		s->atime = ipc_now();
		s->lpid = t->proc->pid;
		*out = (uint64_t)r;
		f->refs--;	/* the VMA holds it now: no detach to tell the segment of (shm_dtime) */
		return 0;
	}
	vma_file_put(f);
	return r;
}

static bool is_shm(const struct vma *v)
{
	return v->file && v->file->unref == seg_unref;
}

/* Is v the piece of an attachment at addr: a segment's VMA whose file offset is its distance from addr? */
static bool attached_at(const struct vma *v, uint64_t addr)
{
	return is_shm(v) && (v->start - addr) / PAGE_SIZE == v->off / PAGE_SIZE;
}

/*
 * shmdt(2), as ksys_shmdt(): the first VMA at or above addr that is a
 * segment mapped from addr, then every piece of that same segment within
 * its size from addr. EINVAL when nothing was detached.
 */
long shm_detach(struct task *t, uint64_t addr)
{
	struct mm *mm = t->mm;
	struct vma_file *f = NULL;
	uint64_t size = 0;
	long r;

	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	for (const struct vma *v = vma_first_above(&mm->vmas, addr); v; v = vma_next(&mm->vmas, v)) {
		if (!attached_at(v, addr))
			continue;
		f = v->file;
		f->refs++;	/* keeps the segment (and f) while its pieces go */
		struct shm_seg *s = f->owner;
		size = PAGE_ALIGN_UP(s->size);
		s->lpid = t->proc->pid;
		uint64_t start = v->start, end = v->end;
		if ((r = mm_munmap(mm, start, end - start)))
			pr_debug("shmdt: munmap %#lx: %ld", start, r);
		break;
	}
	if (!f)
		return -EINVAL;
	for (const struct vma *v = vma_first_above(&mm->vmas, addr); v && v->end - addr <= size;) {
		if (v->file != f || !attached_at(v, addr)) {
			v = vma_next(&mm->vmas, v);
			continue;
		}
		uint64_t start = v->start, end = v->end;
		if ((r = mm_munmap(mm, start, end - start)))
			break;
		v = vma_first_above(&mm->vmas, end);
	}
	vma_file_put(f);	/* the segment goes here if it was removed and this was its last mapping */
	return 0;
}

static void fill_ds(const struct shm_seg *s, struct shmid64_ds *ds)
{
	*ds = (struct shmid64_ds){ .shm_segsz = s->size, .shm_atime = s->atime, .shm_dtime = s->dtime,
				   .shm_ctime = s->ctime, .shm_cpid = s->cpid, .shm_lpid = s->lpid,
				   .shm_nattch = nattch(s) };
	ipc_fill_perm(&s->perm, &ds->shm_perm);
}

/* SHM_LOCK/SHM_UNLOCK: Linux's checks; locked pages count against RLIMIT_MEMLOCK (user_shm_lock()). */
static long shm_lock(struct task *t, struct shm_seg *s, bool lock)
{
	uint64_t lim = t->proc->rlim[RLIMIT_MEMLOCK].rlim_cur;
	bool cap = sandbox.uid == 0;	/* CAP_IPC_LOCK */

	if (!cap) {
		if (sandbox.uid != s->perm.uid && sandbox.uid != s->perm.cuid)
			return -EPERM;
		if (lock && !lim)
			return -EPERM;
	}
	if (lock == !!(s->perm.mode & SHM_LOCKED))
		return 0;
	if (lock) {
		uint64_t n = shm_locked + pages(s->size);
		if (!cap && lim != RLIM_INFINITY && n > lim / PAGE_SIZE)
			return -ENOMEM;
		shm_locked = n;
		s->perm.mode |= SHM_LOCKED;
	} else {
		shm_locked -= pages(s->size);
		s->perm.mode &= ~(unsigned)SHM_LOCKED;
	}
	return 0;
}

static long shm_info(int cmd, void *buf)
{
	int max = ipc_max_idx(&shm_ids);

	if (cmd == IPC_INFO)
		*(struct shminfo64 *)buf = (struct shminfo64){ .shmmax = PVX_SHMMAX, .shmmin = 1, .shmmni = PVX_SHMMNI,
							       .shmseg = PVX_SHMMNI, .shmall = PVX_SHMALL };
	else
		*(struct shm_info *)buf = (struct shm_info){ .used_ids = shm_ids.in_use, .shm_tot = shm_tot,
							     .shm_rss = shm_tot };
	return max < 0 ? 0 : max;
}

/* shmctl(2), as ksys_shmctl() for the 64-bit structs. */
long shm_ctl(struct task *t, int id, int cmd, void *buf)
{
	struct ipc_obj *o;
	long r;

	if (cmd < 0 || id < 0)
		return -EINVAL;
	switch (cmd) {
	case IPC_INFO:
	case SHM_INFO:
		return shm_info(cmd, buf);
	case SHM_STAT:
	case SHM_STAT_ANY:
		if (!(o = ipc_at(&shm_ids, id)))
			return -EINVAL;
		if (cmd == SHM_STAT && (r = ipc_perms(o, S_IRUGO)))
			return r;
		fill_ds(seg_of(o), buf);
		return o->id;
	case IPC_STAT:
	case IPC_SET:
	case IPC_RMID:
	case SHM_LOCK:
	case SHM_UNLOCK:
		break;
	default:
		return -EINVAL;
	}
	if (!(o = ipc_lookup(&shm_ids, id)))
		return -EINVAL;
	struct shm_seg *s = seg_of(o);
	switch (cmd) {
	case IPC_STAT:
		if ((r = ipc_perms(o, S_IRUGO)))
			return r;
		fill_ds(s, buf);
		return 0;
	case SHM_LOCK:
	case SHM_UNLOCK:
		return shm_lock(t, s, cmd == SHM_LOCK);
	}
	if ((r = ipc_owner(o)))
		return r;
	if (cmd == IPC_SET) {
		const struct shmid64_ds *ds = buf;
		if (ds->shm_perm.uid == (unsigned)-1 || ds->shm_perm.gid == (unsigned)-1)
			return -EINVAL;
		ipc_set_perm(o, &ds->shm_perm);
		s->ctime = ipc_now();
		return 0;
	}
	/* IPC_RMID: do_shm_rmid() */
	if (nattch(s)) {
		o->mode |= SHM_DEST;
		o->key = IPC_PRIVATE;
	} else {
		destroy(s);
	}
	return 0;
}

/* /proc/sysvipc/shm's lines (sysvipc_shm_proc_show()). */
long shm_proc_text(FILE *out)
{
	fprintf(out, "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid"
		     "      atime      dtime      ctime                   rss                  swap\n");
	for (int i = 0; i <= ipc_max_idx(&shm_ids); i++) {
		struct ipc_obj *o = ipc_at(&shm_ids, i);
		if (!o)
			continue;
		struct shm_seg *s = seg_of(o);
		fprintf(out, "%10d %10d  %4o %21lu %5u %5u  %5lu %5u %5u %5u %5u %10lu %10lu %10lu %21lu %21lu\n",
			o->key, o->id, o->mode, s->size, s->cpid, s->lpid, nattch(s), o->uid, o->gid, o->cuid, o->cgid,
			s->atime, s->dtime, s->ctime, pages(s->size) * PAGE_SIZE, 0UL);
	}
	return 0;
}
