// SPDX-License-Identifier: GPL-2.0
/*
 * The usertrap (sentry/platform/seccomp_patch.md): which guest syscall
 * sites are patched, and keeping them right as the guest's memory changes.
 *
 * A site is one of two shapes (stub_layout.h) whose syscall just trapped
 * for the 8th time (PVX_SECCOMP_PATCH=N: the Nth), in a private,
 * executable, never-writable mapping, inside one page: "mov $nr,%eax;
 * syscall" (b8 imm32 0f 05), or glibc's read, "xor %eax,%eax; syscall;
 * cmp $-4096,%rax", whose cmp the stub makes on the way back. Either
 * becomes "jmp *SLOT" (ff 24 sib imm32): its syscall then enters the
 * stub's trampoline without a signal. The platform (seccomp) maps the
 * table and tells the stub the slots; this file decides and writes, under
 * the sentry lock, as every change of the guest's memory is made. Calls
 * the stub's passthrough serves count too: it leaves every 31st to the
 * sentry (stub_abi.h pt_count).
 *
 * The bytes change one or a few at a time, in an order that leaves no
 * guest thread a wrong instruction (rewrite): where the original's
 * instructions begin, the jump holds bytes that fault (0x06, invalid in
 * 64-bit mode; "in", a #GP), and those are written first; the first byte
 * becomes 0x06 before the rest changes, and is written last. A thread
 * that meets a faulting byte is taken back by mm_ut_fixup into what the
 * code meant.
 *
 * Never patched: a site a tracer or --strace watches, in a process that
 * uses its own GS base, in memory that is or was made writable (JITs,
 * self-modifying code), in a shared or sealed mapping. A guest that reads
 * its own patched code sees the jump (as under gVisor); PVX_SECCOMP_PATCH=0
 * turns patching off.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pvx/log.h"
#include "pvx/mm.h"
#include "pvx/stub_layout.h"
#include "sentry/platform/platform.h"

#define UT_SEEN 4096	/* at most so many sites looked at, patched or not (a power of two) */
#define UT_SEEN_MIN 64	/* ... in a set that starts this big and doubles as it fills: most processes are short */
#define UT_AFTER 8	/* a site is patched at its 8th trap: a patch costs ~10 traps' worth (two stub commands, five writes) */
#define UT_JMP 7	/* the patch: jmp *SLOT (ff 24 sib imm32) */

struct ut_slot {
	uint64_t site;	/* 0: free */
	uint32_t nr;
	uint8_t shape;
	bool live;	/* patched, as far as we know (a discard may have brought the file's bytes back) */
};

struct mm_ut {
	bool mapped;	/* the table is in the stub */
	bool dead;	/* no more patching in this mm (its GS, the table's range taken, a failure) */
	uint32_t n;	/* slots below n may be handed out (slot has room for them); none is ever reused */
	uint32_t nmov, nread;	/* the next of each shape's slots (slot_next) */
	uint32_t nseen, cap;	/* sites in the seen set, and its size */
	struct ut_slot *slot;
	uint64_t *seen;	/* a trap's rip + 1; 0: empty */
	uint8_t *traps;	/* ... and how many times it trapped, up to 255 */
};

/*
 * The shapes (stub_layout.h): the original's length, where its syscall
 * leaves rip, and where its instructions begin inside the patch (but at
 * 0: bit i for offset i), each a byte of the patch that faults there.
 */
static const struct ut_shape {
	uint8_t len, ret, starts;
	uint8_t orig[10];
} shapes[] = {
	[STUB_UT_MOV] = { 7, STUB_UT_RET(STUB_UT_MOV), 1 << 5, { 0xb8, 0, 0, 0, 0, 0x0f, 0x05 } },
	[STUB_UT_READ] = { STUB_UT_READ_LEN, STUB_UT_RET(STUB_UT_READ), 1 << 2 | 1 << 4,
			   { 0x31, 0xc0, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff } },
};
static const uint8_t read_classes[] = STUB_UT_READ_CLASSES;

/* At which trap of a site it is patched: PVX_SECCOMP_PATCH (0: never), else UT_AFTER. */
static unsigned ut_after(void)
{
	static int after = -1;

	if (after < 0) {
		const char *e = getenv("PVX_SECCOMP_PATCH");
		long n = e && *e ? strtol(e, NULL, 10) : UT_AFTER;
		after = n < 0 ? 0 : n > 255 ? 255 : (int)n;
	}
	return (unsigned)after;
}

/* The seen set at cap entries (a power of two), its sites placed again; false: no memory (it stays as it was). */
static bool seen_resize(struct mm_ut *ut, uint32_t cap)
{
	uint64_t *seen = calloc(cap, sizeof(*seen));
	uint8_t *traps = calloc(cap, 1);

	if (!seen || !traps) {
		free(seen);
		free(traps);
		return false;
	}
	for (uint32_t i = 0; i < ut->cap; i++) {
		if (!ut->seen[i])
			continue;
		uint32_t j = (uint32_t)((ut->seen[i] - 1) * 0x9e3779b97f4a7c15ULL >> 40) & (cap - 1);
		while (seen[j])
			j = (j + 1) & (cap - 1);
		seen[j] = ut->seen[i], traps[j] = ut->traps[i];
	}
	free(ut->seen);
	free(ut->traps);
	ut->seen = seen, ut->traps = traps, ut->cap = cap;
	return true;
}

/* How many times the syscall ending at rip trapped, this time included (up to 255); 0 when the set is full. */
static unsigned seen_hit(struct mm_ut *ut, uint64_t rip)
{
	if (ut->nseen >= ut->cap / 2 && ut->cap < UT_SEEN)
		seen_resize(ut, ut->cap ? 2 * ut->cap : UT_SEEN_MIN);	/* (else it stays as it is) */
	uint32_t h = (uint32_t)(rip * 0x9e3779b97f4a7c15ULL >> 40);

	for (uint32_t i = 0; i < ut->cap; i++) {
		uint32_t j = (h + i) & (ut->cap - 1);
		if (ut->seen[j] == rip + 1) {
			if (ut->traps[j] < 255)
				ut->traps[j]++;
			return ut->traps[j];
		}
		if (!ut->seen[j]) {
			if (ut->nseen >= ut->cap / 2)
				return 0;
			ut->seen[j] = rip + 1;
			ut->traps[j] = 1;
			ut->nseen++;
			return 1;
		}
	}
	return 0;
}

static bool read_class(uint32_t k)
{
	return memchr(read_classes, (int)(k >> 5), sizeof(read_classes)) != NULL;
}

/* A slot for a site of shape: a STUB_UT_READ one's imm32 must fault at its cmp (k >> 5 in read_classes). */
static long slot_next(struct mm_ut *ut, int shape)
{
	uint32_t k;

	if (shape == STUB_UT_READ) {
		if (ut->nread >= 32 * sizeof(read_classes))
			return -1;
		k = 32 * read_classes[ut->nread / 32] + ut->nread % 32;
		ut->nread++;
	} else {
		while (ut->nmov < STUB_UT_SLOTS && read_class(ut->nmov))
			ut->nmov++;
		if (ut->nmov >= STUB_UT_SLOTS)
			return -1;
		k = ut->nmov++;
	}
	if (k >= ut->n) {	/* room up to k: the array grows in powers of two */
		uint32_t want = 16;
		while (want <= k)
			want *= 2;
		struct ut_slot *more = realloc(ut->slot, want * sizeof(*more));
		if (!more)
			return -1;
		memset(more + ut->n, 0, (want - ut->n) * sizeof(*more));
		ut->slot = more;
		ut->n = want;
	}
	return k;
}

static void patch_bytes(uint8_t b[UT_JMP], uint32_t k, int shape)
{
	uint32_t slot = STUB_UT_TABLE_ADDR + 8 * k;

	b[0] = 0xff, b[1] = 0x24, b[2] = shape == STUB_UT_READ ? 0xe5 : 0x25;
	memcpy(b + 3, &slot, 4);
}

static void orig_bytes(uint8_t b[10], int shape, uint32_t nr)
{
	memcpy(b, shapes[shape].orig, shapes[shape].len);
	if (shape == STUB_UT_MOV)
		memcpy(b + 1, &nr, 4);
}

static long as_mprotect(struct mm *mm, uint64_t page, int prot)
{
	const long a[6] = { (long)page, 4096, prot };

	return mm->as->ops->as_syscall(mm->as, SYS_mprotect, a);
}

/* The bytes of to at site whose offsets (1 to 6) are in mask or not (want), a run at a time. */
static long poke_some(struct mm *mm, uint64_t site, const uint8_t to[UT_JMP], unsigned mask, bool want)
{
	for (int i = 1; i < UT_JMP;) {
		int j = i;
		while (j < UT_JMP && !!(mask & 1u << j) == want)
			j++;
		if (j > i) {
			long r = copy_to_guest(mm, site + (uint64_t)i, to + i, (size_t)(j - i));
			if (r)
				return r;
		}
		i = j + 1;
	}
	return 0;
}

/*
 * The 7 bytes at site become to (patch: the jump; else the original), in
 * an order that leaves every thread an instruction it may run or one that
 * faults: the first byte becomes 0x06 before the others change, and is
 * written last; the original's other instruction starts (faulting bytes
 * in the jump) change first when patching, last when restoring. prot >= 0:
 * the page's protection, which is opened for the writes and put back; -1:
 * it is writable already.
 */
static long rewrite(struct mm *mm, uint64_t site, int shape, const uint8_t to[UT_JMP], bool patch, int prot)
{
	static const uint8_t bad = 0x06;
	unsigned starts = shapes[shape].starts;
	uint64_t page = site & ~4095UL;
	long r = prot >= 0 ? as_mprotect(mm, page, prot | PROT_WRITE) : 0;

	if (r < 0)
		return r;
	if (patch)
		r = poke_some(mm, site, to, starts, true) ?: copy_to_guest(mm, site, &bad, 1) ?:
		    poke_some(mm, site, to, starts, false) ?: copy_to_guest(mm, site, to, 1);
	else
		r = copy_to_guest(mm, site, &bad, 1) ?: poke_some(mm, site, to, starts, false) ?:
		    poke_some(mm, site, to, starts, true) ?: copy_to_guest(mm, site, to, 1);
	if (prot >= 0) {
		long e = as_mprotect(mm, page, prot);
		if (e < 0) {
			pr_warn("usertrap: page %#lx stays writable (%ld)", page, e);
			r = r ?: e;
		}
	}
	return r;
}

/*
 * Slot k's site back to the original bytes (prot: as in rewrite). The
 * stub keeps the slot (slots are never reused): a thread that took the
 * jump just before still has its syscall made, and returns after it.
 */
static void unpatch(struct mm *mm, uint32_t k, int prot)
{
	struct ut_slot *s = &mm->ut->slot[k];
	uint8_t now[UT_JMP], want[UT_JMP], orig[10];

	s->live = false;
	patch_bytes(want, k, s->shape);
	orig_bytes(orig, s->shape, s->nr);
	/* Only our own jump goes back: a page the file's bytes came back to (a discard) is left alone. */
	if (copy_from_guest(mm, now, s->site, UT_JMP) || memcmp(now, want, UT_JMP))
		return;
	if (rewrite(mm, s->site, s->shape, orig, false, prot) < 0) {
		pr_warn("usertrap: the site at %#lx could not be restored", s->site);
		mm->ut->dead = true;
	}
}

/* The shape of the site whose syscall ended at rip (its first byte in *site), or -1: none that is patched. */
static int site_shape(struct mm *mm, uint64_t rip, uint32_t nr, uint64_t *site)
{
	uint8_t b[10], orig[10];

	for (int shape = STUB_UT_MOV; shape <= STUB_UT_READ; shape++) {
		const struct ut_shape *sh = &shapes[shape];
		*site = rip - sh->ret;
		if (shape == STUB_UT_READ && nr != 0)
			continue;
		if ((*site >> 12) != ((*site + sh->len - 1) >> 12))
			continue;	/* one page: one mprotect, and bytes that change together */
		orig_bytes(orig, shape, nr);
		if (!copy_from_guest(mm, b, *site, sh->len) && !memcmp(b, orig, sh->len))
			return shape;
	}
	return -1;
}

void mm_ut_consider(struct mm *mm, const struct pvx_regs *regs)
{
	struct addr_space *as = mm->as;
	uint64_t site;

	if (!as || !as->ops->as_ut_map || regs->rip < PVX_GUEST_MIN + 7 || regs->rip > PVX_GUEST_TASK_SIZE - 6)
		return;
	if (!mm->ut) {
		if (!ut_after() || !(mm->ut = calloc(1, sizeof(*mm->ut))))
			return;
	}
	struct mm_ut *ut = mm->ut;
	if (ut->dead)
		return;
	if (regs->gs_base) {	/* its own GS (the stub's %gs is the trampoline's way to its region) */
		mm_ut_off(mm);
		return;
	}
	if (seen_hit(ut, regs->rip) != ut_after())
		return;	/* not yet (a short-lived process would pay more than it saves), or looked at already */
	uint32_t nr = (uint32_t)regs->orig_rax;
	int shape = site_shape(mm, regs->rip, nr, &site);
	if (shape < 0)
		return;
	const struct vma *v = vma_lookup(&mm->vmas, site);
	if (!v || site + shapes[shape].len > v->end || !(v->prot & PROT_EXEC) || (v->prot & PROT_WRITE) ||
	    (v->flags & (MAP_TYPE | VMA_SEALED | PVX_MAP_NOWRITE)) != MAP_PRIVATE)
		return;
	if (!ut->mapped) {
		if (!vma_range_free(&mm->vmas, STUB_UT_TABLE_ADDR, STUB_UT_TABLE_ADDR + STUB_UT_TABLE_SIZE) ||
		    as->ops->as_ut_map(as) < 0) {
			ut->dead = true;
			return;
		}
		ut->mapped = true;
	}
	long k = slot_next(ut, shape);
	if (k < 0)
		return;
	uint8_t jmp[UT_JMP];
	ut->slot[k] = (struct ut_slot){ site, nr, (uint8_t)shape, true };
	as->ops->as_ut_slot(as, (int)k, site, nr, shape);	/* before the first thread can jump there */
	patch_bytes(jmp, (uint32_t)k, shape);
	if (rewrite(mm, site, shape, jmp, true, v->prot) < 0) {
		pr_debug("usertrap: the site at %#lx could not be patched", site);
		unpatch(mm, (uint32_t)k, v->prot);
		ut->dead = true;
	}
}

void mm_ut_off(struct mm *mm)
{
	struct mm_ut *ut = mm->ut;

	if (!ut || ut->dead)
		return;
	ut->dead = true;
	for (uint32_t k = 0; k < ut->n; k++) {
		const struct vma *v = ut->slot[k].live ? vma_lookup(&mm->vmas, ut->slot[k].site) : NULL;
		if (v)
			unpatch(mm, k, v->prot);
	}
}

void mm_ut_change(struct mm *mm, uint64_t start, uint64_t end, enum mm_ut_how how, uint64_t to)
{
	struct mm_ut *ut = mm->ut;

	if (!ut || !ut->n)
		return;
	/* The table's range is the guest's to take: every site goes back first, and patching ends. */
	if (how == UT_GONE && ut->mapped && start < STUB_UT_TABLE_ADDR + STUB_UT_TABLE_SIZE && end > STUB_UT_TABLE_ADDR) {
		mm_ut_off(mm);
		ut->mapped = false;
	}
	for (uint32_t k = 0; k < ut->n; k++) {
		struct ut_slot *s = &ut->slot[k];
		if (!s->live || s->site + shapes[s->shape].len <= start || s->site >= end)
			continue;
		if (how == UT_WRITABLE) {
			unpatch(mm, k, -1);
		} else if (how == UT_MOVED) {
			s->site = to + (s->site - start);
			mm->as->ops->as_ut_slot(mm->as, (int)k, s->site, s->nr, s->shape);
		} else {
			s->live = false;	/* its bytes go with the mapping (a thread in the trampoline returns to nothing, as on Linux) */
		}
	}
}

/*
 * A fault inside a site's 7 bytes, where one of its instructions began:
 * the 0x06 a thread met while the bytes changed (run again: they are whole
 * now), or a patched site's faulting byte at the syscall's place (a
 * restart's rip - 2, a jump there: the syscall of rax) or at the cmp's (a
 * STUB_UT_READ's return with a frame: the cmp is made, and on after it).
 */
bool mm_ut_fixup(struct mm *mm, struct pvx_regs *regs, struct pvx_trap *trap)
{
	struct mm_ut *ut = mm->ut;

	if (!ut || (trap->signo != SIGILL && trap->signo != SIGSEGV) || trap->code <= 0)
		return false;
	for (uint32_t k = 0; k < ut->n; k++) {
		const struct ut_slot *s = &ut->slot[k];
		const struct ut_shape *sh = &shapes[s->shape];
		uint64_t off = regs->rip - s->site;
		if (!s->site || off >= UT_JMP || (off && !(sh->starts & 1u << off)))
			continue;
		/* "in" (the jump's SIB byte) faults with a #GP: SIGSEGV, SI_KERNEL; every other such byte is invalid */
		bool in = s->shape == STUB_UT_READ && off == 2;
		if (trap->signo != (in ? SIGSEGV : SIGILL) || (in && trap->code != 0x80))
			continue;
		uint8_t now[UT_JMP], jmp[UT_JMP], orig[10];
		patch_bytes(jmp, k, s->shape);
		orig_bytes(orig, s->shape, s->nr);
		if (copy_from_guest(mm, now, s->site, UT_JMP))
			return false;
		bool patched = !memcmp(now, jmp, UT_JMP);
		if (!patched && memcmp(now, orig, UT_JMP))
			continue;	/* not our bytes (any more) */
		if (patched && off + 2 == sh->ret) {
			/* The syscall the patch covered, reached without what set its number: rax is that. */
			regs->rip = regs->rcx = s->site + sh->ret;
			regs->r11 = regs->eflags;
			regs->orig_rax = regs->rax;
			trap->kind = TRAP_SYSCALL;
		} else if (patched && off == sh->ret) {
			/* The cmp after a STUB_UT_READ's syscall (the stub makes it on a return without a frame). */
			regs->eflags = (regs->eflags & ~0x8d5UL) | stub_ut_cmp_flags(regs->rax);
			regs->rip = s->site + sh->len;
		}
		return true;	/* else met while the bytes changed: they are whole now, run them */
	}
	return false;
}

long mm_ut_copy(struct mm *child, const struct mm *parent, bool by_host)
{
	const struct mm_ut *p = parent->ut;

	if (!p || !p->n || !child->as || !child->as->ops->as_ut_map)
		return 0;
	struct mm_ut *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;	/* the child's patched sites would be nobody's */
	*c = *p;
	c->slot = malloc(p->n * sizeof(*c->slot));
	c->seen = p->cap ? malloc(p->cap * sizeof(*c->seen)) : NULL;
	c->traps = p->cap ? malloc(p->cap) : NULL;
	if (!c->slot || (p->cap && (!c->seen || !c->traps))) {
		free(c->slot), free(c->seen), free(c->traps), free(c);
		return -ENOMEM;
	}
	memcpy(c->slot, p->slot, p->n * sizeof(*c->slot));
	if (p->cap) {
		memcpy(c->seen, p->seen, p->cap * sizeof(*c->seen));
		memcpy(c->traps, p->traps, p->cap);
	}
	child->ut = c;
	for (uint32_t k = 0; k < c->n; k++)
		child->as->ops->as_ut_slot(child->as, (int)k, c->slot[k].site, c->slot[k].nr, c->slot[k].shape);
	/* A copy (not the host's fork) has no table yet: map it, or put every site back. */
	if (!by_host && c->mapped && child->as->ops->as_ut_map(child->as) < 0) {
		pr_warn("usertrap: no table in the copy of %d: its sites go back", parent->as ? parent->as->pid : 0);
		c->mapped = false;
		mm_ut_off(child);
	}
	return 0;
}

void mm_ut_free(struct mm *mm)
{
	if (mm->ut) {
		free(mm->ut->slot);
		free(mm->ut->seen);
		free(mm->ut->traps);
	}
	free(mm->ut);
	mm->ut = NULL;
}
