// SPDX-License-Identifier: GPL-2.0
/*
 * The usertrap (sentry/platform/seccomp_patch.md): which guest syscall
 * sites are patched, and keeping them right as the guest's memory changes.
 *
 * A site is "mov $nr,%eax; syscall" (b8 imm32 0f 05) that just trapped
 * for syscall nr for the 8th time (PVX_SECCOMP_PATCH=N: the Nth), in a
 * private, executable, never-writable mapping, inside one page. It becomes "jmp *SLOT" (ff 24 25 imm32, stub_layout.h): its
 * syscall then enters the stub's trampoline without a signal. The platform
 * (seccomp) maps the table and tells the stub the slots; this file decides
 * and writes, under the sentry lock, as every change of the guest's
 * memory is made.
 *
 * The bytes change one or a few at a time, in an order that leaves no
 * guest thread a wrong instruction: the syscall's first byte, then the
 * mov's, become 0x06 (invalid in 64-bit mode) before the rest changes,
 * and the first byte is written last. A thread that meets a 0x06 takes a
 * SIGILL that mm_ut_fixup turns back into what the code meant.
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

#define UT_SEEN 4096	/* sites looked at, patched or not (a power of two) */
#define UT_AFTER 8	/* a site is patched at its 8th trap: a patch costs ~10 traps' worth (two stub commands, five writes) */

struct mm_ut {
	bool mapped;	/* the table is in the stub */
	bool dead;	/* no more patching in this mm (its GS, the table's range taken, a failure) */
	uint32_t n;	/* slots handed out; never reused */
	uint32_t nseen;
	struct ut_slot {
		uint64_t site;
		uint32_t nr;
		bool live;	/* patched, as far as we know (a discard may have brought the file's bytes back) */
	} slot[STUB_UT_SLOTS];
	uint64_t seen[UT_SEEN];	/* site + 1; 0: empty */
	uint8_t traps[UT_SEEN];	/* ... and how many times it trapped, up to 255 */
};

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

/* How many times site trapped, this time included (up to 255); 0 when the set is full. */
static unsigned seen_hit(struct mm_ut *ut, uint64_t site)
{
	uint64_t h = (site * 0x9e3779b97f4a7c15ULL) >> 52;

	for (uint32_t i = 0; i < UT_SEEN; i++) {
		uint32_t j = (uint32_t)((h + i) & (UT_SEEN - 1));
		if (ut->seen[j] == site + 1) {
			if (ut->traps[j] < 255)
				ut->traps[j]++;
			return ut->traps[j];
		}
		if (!ut->seen[j]) {
			if (ut->nseen >= UT_SEEN / 2)
				return 0;
			ut->seen[j] = site + 1;
			ut->traps[j] = 1;
			ut->nseen++;
			return 1;
		}
	}
	return 0;
}

static void patch_bytes(uint8_t b[7], uint32_t k)
{
	uint32_t slot = STUB_UT_TABLE_ADDR + 8 * k;

	b[0] = 0xff, b[1] = 0x24, b[2] = 0x25;
	memcpy(b + 3, &slot, 4);
}

static void orig_bytes(uint8_t b[7], uint32_t nr)
{
	b[0] = 0xb8;
	memcpy(b + 1, &nr, 4);
	b[5] = 0x0f, b[6] = 0x05;
}

static long as_mprotect(struct mm *mm, uint64_t page, int prot)
{
	const long a[6] = { (long)page, 4096, prot };

	return mm->as->ops->as_syscall(mm->as, SYS_mprotect, a);
}

static long poke(struct mm *mm, uint64_t addr, const uint8_t *p, size_t n)
{
	return copy_to_guest(mm, addr, p, n);
}

/*
 * The 7 bytes at site become to (patch: the jump; else the original), in
 * the order the header says. prot >= 0: the page's protection, which is
 * opened for the writes and put back; -1: it is writable already.
 */
static long rewrite(struct mm *mm, uint64_t site, const uint8_t to[7], bool patch, int prot)
{
	static const uint8_t bad = 0x06;
	uint64_t page = site & ~4095UL;
	long r = prot >= 0 ? as_mprotect(mm, page, prot | PROT_WRITE) : 0;

	if (r < 0)
		return r;
	if (patch)
		r = poke(mm, site + 5, &bad, 1) ?: poke(mm, site, &bad, 1) ?: poke(mm, site + 1, to + 1, 4) ?:
		    poke(mm, site + 6, to + 6, 1) ?: poke(mm, site, to, 1);
	else
		r = poke(mm, site, &bad, 1) ?: poke(mm, site + 1, to + 1, 4) ?: poke(mm, site + 6, to + 6, 1) ?:
		    poke(mm, site + 5, to + 5, 1) ?: poke(mm, site, to, 1);
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
 * jump just before still has its syscall made, and returns to site + 7.
 */
static void unpatch(struct mm *mm, uint32_t k, int prot)
{
	struct ut_slot *s = &mm->ut->slot[k];
	uint8_t now[7], want[7], orig[7];

	s->live = false;
	patch_bytes(want, k);
	orig_bytes(orig, s->nr);
	/* Only our own jump goes back: a page the file's bytes came back to (a discard) is left alone. */
	if (copy_from_guest(mm, now, s->site, 7) || memcmp(now, want, 7))
		return;
	if (rewrite(mm, s->site, orig, false, prot) < 0) {
		pr_warn("usertrap: the site at %#lx could not be restored", s->site);
		mm->ut->dead = true;
	}
}

void mm_ut_consider(struct mm *mm, const struct pvx_regs *regs)
{
	struct addr_space *as = mm->as;
	uint64_t site = regs->rip - 7;

	if (!as || !as->ops->as_ut_map || regs->rip < PVX_GUEST_MIN + 7 || regs->rip > PVX_GUEST_TASK_SIZE)
		return;
	if (!mm->ut) {
		if (!ut_after() || !(mm->ut = calloc(1, sizeof(*mm->ut))))
			return;
	}
	struct mm_ut *ut = mm->ut;
	if (ut->dead || ut->n >= STUB_UT_SLOTS)
		return;
	if (regs->gs_base) {	/* its own GS (the stub's %gs is the trampoline's way to its region) */
		mm_ut_off(mm);
		return;
	}
	if (seen_hit(ut, site) != ut_after())
		return;	/* not yet (a short-lived process would pay more than it saves), or looked at already */
	const struct vma *v = vma_lookup(&mm->vmas, site);
	if (!v || regs->rip > v->end || (site >> 12) != ((site + 6) >> 12) || !(v->prot & PROT_EXEC) ||
	    (v->prot & PROT_WRITE) || (v->flags & (MAP_TYPE | VMA_SEALED | PVX_MAP_NOWRITE)) != MAP_PRIVATE)
		return;
	uint32_t nr = (uint32_t)regs->orig_rax;
	uint8_t b[7], orig[7], jmp[7];
	orig_bytes(orig, nr);
	if (copy_from_guest(mm, b, site, 7) || memcmp(b, orig, 7))
		return;
	if (!ut->mapped) {
		if (!vma_range_free(&mm->vmas, STUB_UT_TABLE_ADDR, STUB_UT_TABLE_ADDR + STUB_UT_TABLE_SIZE) ||
		    as->ops->as_ut_map(as) < 0) {
			ut->dead = true;
			return;
		}
		ut->mapped = true;
	}
	uint32_t k = ut->n++;
	ut->slot[k] = (struct ut_slot){ site, nr, true };
	as->ops->as_ut_slot(as, (int)k, site, nr);	/* before the first thread can jump there */
	patch_bytes(jmp, k);
	if (rewrite(mm, site, jmp, true, v->prot) < 0) {
		pr_debug("usertrap: the site at %#lx could not be patched", site);
		unpatch(mm, k, v->prot);
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
		if (!s->live || s->site + 7 <= start || s->site >= end)
			continue;
		if (how == UT_WRITABLE) {
			unpatch(mm, k, -1);
		} else if (how == UT_MOVED) {
			s->site = to + (s->site - start);
			mm->as->ops->as_ut_slot(mm->as, (int)k, s->site, s->nr);
		} else {
			s->live = false;	/* its bytes go with the mapping (a thread in the trampoline returns to nothing, as on Linux) */
		}
	}
}

bool mm_ut_fixup(struct mm *mm, struct pvx_regs *regs, struct pvx_trap *trap)
{
	struct mm_ut *ut = mm->ut;

	if (!ut || trap->signo != SIGILL || trap->code <= 0)
		return false;
	for (uint32_t k = 0; k < ut->n; k++) {
		uint64_t site = ut->slot[k].site;
		if (regs->rip != site && regs->rip != site + 5)
			continue;
		uint8_t now[7], jmp[7], orig[7];
		patch_bytes(jmp, k);
		orig_bytes(orig, ut->slot[k].nr);
		if (copy_from_guest(mm, now, site, 7))
			return false;
		bool patched = !memcmp(now, jmp, 7);
		if (!patched && memcmp(now, orig, 7))
			continue;	/* not our bytes (any more) */
		if (patched && regs->rip == site + 5) {
			/* The syscall the patch covered, reached without the mov (a restart, a jump): rax is its number. */
			regs->rip = regs->rcx = site + 7;
			regs->r11 = regs->eflags;
			regs->orig_rax = regs->rax;
			trap->kind = TRAP_SYSCALL;
			return true;
		}
		return true;	/* met while the bytes changed: they are whole now, run them */
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
	memcpy(c, p, sizeof(*c));
	child->ut = c;
	for (uint32_t k = 0; k < c->n; k++)
		child->as->ops->as_ut_slot(child->as, (int)k, c->slot[k].site, c->slot[k].nr);
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
	free(mm->ut);
	mm->ut = NULL;
}
