// SPDX-License-Identifier: GPL-2.0
/*
 * The ELF loader, after fs/binfmt_elf.c: PT_LOAD segments are mapped from
 * the file (MAP_PRIVATE), the bss is zeroed and mapped anonymous, the
 * break starts after the highest segment, a PT_INTERP program (ld.so) is
 * mapped where mmap would put it and entered first, and the stack holds
 * argc, argv, envp and the auxiliary vector the way the kernel lays them
 * out. Addresses are randomized as Linux's ASLR does
 * (include/pvx/guest_layout.h) unless personality(ADDR_NO_RANDOMIZE).
 */
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "pvx/loader.h"
#include "pvx/log.h"
#include "sentry/platform/platform.h"

static long reject(struct elf_info *ei, const char *why)
{
	ei->why = why;
	return -ENOEXEC;
}

/* Checks of one program header against the file and the guest range. */
static const char *bad_phdr(const struct elf_info *ei, const Elf64_Phdr *p)
{
	if (p->p_type != PT_LOAD)
		return NULL;
	if (p->p_filesz > p->p_memsz)
		return "malformed program header: p_filesz > p_memsz";
	if (p->p_offset > ei->file_size || p->p_filesz > ei->file_size - p->p_offset)
		return "malformed program header: segment extends past end of file";
	if ((p->p_vaddr & ~PAGE_MASK) != (p->p_offset & ~PAGE_MASK))
		return "malformed program header: p_vaddr and p_offset not congruent modulo the page size";
	if (p->p_vaddr >= PVX_GUEST_TASK_SIZE || p->p_memsz > PVX_GUEST_TASK_SIZE - p->p_vaddr)
		return "malformed program header: segment outside the user address range";
	return NULL;
}

long elf_read(int fd, struct elf_info *ei)
{
	struct stat st;
	Elf64_Ehdr *eh = &ei->eh;
	ssize_t n;

	memset(ei, 0, sizeof(*ei));
	if (fstat(fd, &st) < 0)
		return neg_errno();
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	ei->file_size = (uint64_t)st.st_size;
	n = pread(fd, eh, sizeof(*eh), 0);
	if (n < 0)
		return neg_errno();
	if (n < SELFMAG || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return reject(ei, "not an ELF executable");
	if ((size_t)n < sizeof(*eh))
		return reject(ei, "truncated ELF header");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		return reject(ei, "not an x86-64 executable (pvx runs x86-64 ELF64 binaries)");
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return reject(ei, "not an executable ELF file (e_type is neither EXEC nor DYN)");
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return reject(ei, "malformed ELF header: bad e_phentsize");
	if (eh->e_phnum == 0 || eh->e_phnum > ELF_MAX_PHNUM)
		return reject(ei, "malformed ELF header: bad e_phnum");
	size_t phsize = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (eh->e_phoff > ei->file_size || phsize > ei->file_size - eh->e_phoff)
		return reject(ei, "malformed ELF header: program headers past end of file");
	n = pread(fd, ei->ph, phsize, (off_t)eh->e_phoff);
	if (n < 0)
		return neg_errno();
	if ((size_t)n != phsize)
		return reject(ei, "malformed ELF header: short read of program headers");

	int loads = 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *p = &ei->ph[i];
		const char *why = bad_phdr(ei, p);
		if (why)
			return reject(ei, why);
		if (p->p_type == PT_INTERP && !ei->interp[0]) {	/* the first one counts */
			/* load_elf_binary(): "if (elf_ppnt->p_filesz > PATH_MAX || < 2) goto out_free_ph" */
			if (p->p_filesz > sizeof(ei->interp) || p->p_filesz < 2 || p->p_offset > ei->file_size ||
			    p->p_filesz > ei->file_size - p->p_offset)
				return reject(ei, "malformed PT_INTERP");
			n = pread(fd, ei->interp, p->p_filesz, (off_t)p->p_offset);
			if (n < 0)
				return neg_errno();
			if ((uint64_t)n != p->p_filesz || ei->interp[n - 1])
				return reject(ei, "malformed PT_INTERP: not a NUL-terminated path");
			if (!ei->interp[0])
				return reject(ei, "malformed PT_INTERP: empty path");
		}
		if (p->p_type == PT_GNU_STACK)
			ei->exec_stack = p->p_flags & PF_X;
		loads += p->p_type == PT_LOAD;
	}
	if (!loads)
		return reject(ei, "malformed ELF file: no PT_LOAD segment");
	return 0;
}

static int seg_prot(const Elf64_Phdr *p)
{
	return (p->p_flags & PF_R ? PROT_READ : 0) | (p->p_flags & PF_W ? PROT_WRITE : 0) |
	       (p->p_flags & PF_X ? PROT_EXEC : 0);
}

/* Map one PT_LOAD segment as binfmt_elf's elf_load() does. */
static long map_segment(struct mm *mm, int fd, const Elf64_Phdr *p, uint64_t bias)
{
	uint64_t start = bias + p->p_vaddr, file_end = start + p->p_filesz;
	uint64_t mem_end = start + p->p_memsz, page = PAGE_ALIGN_DOWN(start);
	int prot = seg_prot(p);
	long r;

	if (p->p_filesz) {
		/* The partial page after file_end is zeroed below, so it must be writable then. */
		bool zero_tail = p->p_memsz > p->p_filesz && (file_end & ~PAGE_MASK);
		r = mm_mmap(mm, page, PAGE_ALIGN_UP(file_end) - page, prot | (zero_tail ? PROT_WRITE : 0),
			    MAP_PRIVATE | MAP_FIXED, fd, p->p_offset - (start - page));
		if (r < 0)
			return r;
		if (zero_tail) {
			r = clear_guest(mm, file_end, PAGE_ALIGN_UP(file_end) - file_end);
			if (!r && !(prot & PROT_WRITE))
				r = mm_mprotect(mm, page, PAGE_ALIGN_UP(file_end) - page, prot);
			if (r)
				return r;
		}
		page = PAGE_ALIGN_UP(file_end);
	}
	if (PAGE_ALIGN_UP(mem_end) > page) {
		r = mm_mmap(mm, page, PAGE_ALIGN_UP(mem_end) - page, prot,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A downward-growing byte buffer that mirrors the top of the guest stack. */
struct stack_img {
	char *buf;
	size_t size, used;	/* bytes used from the top */
	uint64_t top;		/* guest address of buf + size */
};

static uint64_t push_bytes(struct stack_img *s, const void *p, size_t n)
{
	if (n > s->size - s->used)
		return 0;
	s->used += n;
	memcpy(s->buf + s->size - s->used, p, n);
	return s->top - s->used;
}

static uint64_t push_str(struct stack_img *s, const char *str)
{
	return push_bytes(s, str, strlen(str) + 1);
}

#define STACK_IMG_MAX (256UL << 10)	/* argv+envp+auxv we accept (the kernel: 1/4 of 8 MiB) */
#define STACK_EXPAND (128UL << 10)	/* setup_arg_pages()'s stack_expand */
/* What build_stack puts below the strings of n arguments and variables, aligned at its worst. */
#define STACK_REST(n) (sizeof("x86_64") + 15 + 16 + ((n) + 3 + 2 * 32) * sizeof(uint64_t) + 15)

/* A random number below max (0 when max is 0). */
static uint64_t rnd_below(uint64_t max)
{
	uint64_t r;

	if (!max)
		return 0;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = 0;
	return r % max;
}

/* randomize_page(): a page-aligned offset below max, or 0 without ASLR. */
static uint64_t rnd_pages(bool aslr, uint64_t max)
{
	return aslr ? rnd_below(max / PAGE_SIZE) * PAGE_SIZE : 0;
}

/* What the auxiliary vector says of the images. */
struct auxv_info {
	uint64_t phdr, phnum, base, entry;
	bool aslr;
};

static long map_stack(struct mm *mm, uint64_t rsp, bool exec_stack);

/* Build argc/argv/envp/auxv, map the stack under it (map_stack) and copy them to its top; returns the initial rsp. */
static long build_stack(struct task *t, const struct auxv_info *ai, char *const argv[], char *const envp[],
			const char *execfn, bool exec_stack)
{
	struct stack_img s = { .size = STACK_IMG_MAX, .top = t->mm->stack_top };
	cleanup_free uint64_t *vec = NULL;
	size_t argc = 0, envc = 0, n = 0;
	unsigned char rnd[16];
	long err = -E2BIG;

	while (argv[argc])
		argc++;
	while (envp[envc])
		envc++;
	s.buf = malloc(s.size);
	vec = calloc(argc + envc + 3 + 2 * 32, sizeof(*vec));
	if (!s.buf || !vec) {
		free(s.buf);
		return -ENOMEM;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		memset(rnd, 0x5a, sizeof(rnd));

	uint64_t a_execfn = push_str(&s, execfn);
	uint64_t envs[envc + 1], args[argc + 1];
	for (size_t i = envc; i-- > 0;)
		envs[i] = push_str(&s, envp[i]);
	t->mm->env_end = a_execfn;	/* the strings lie in order below execfn's, as the kernel's env_start..env_end */
	t->mm->env_start = envc ? envs[0] : a_execfn;
	for (size_t i = argc; i-- > 0;)
		args[i] = push_str(&s, argv[i]);
	/*
	 * create_elf_tables(): "p = arch_align_stack(p)": below the strings,
	 * down by up to 8 KiB -- less when the image would not fit otherwise
	 * (what elf_args_fit promised before the point of no return).
	 */
	if (ai->aslr) {
		size_t rest = STACK_REST(argc + envc), gap = rnd_below(8192);
		s.used += s.used + rest >= s.size ? 0 : MIN(gap, s.size - s.used - rest);
	}
	uint64_t a_platform = push_str(&s, "x86_64");
	s.used = (s.used + 15) & ~15UL;
	uint64_t a_random = push_bytes(&s, rnd, sizeof(rnd));
	if (!a_random || !a_platform || !a_execfn)
		goto out;

	vec[n++] = argc;
	for (size_t i = 0; i < argc; i++)
		vec[n++] = args[i];
	vec[n++] = 0;
	for (size_t i = 0; i < envc; i++)
		vec[n++] = envs[i];
	vec[n++] = 0;
#define AUX(k, v) (vec[n++] = (k), vec[n++] = (v))
	if (t->mm->as->vdso)	/* ARCH_DLINFO: the host's, which answers on the sentry's own clocks */
		AUX(AT_SYSINFO_EHDR, t->mm->as->vdso);
	AUX(AT_HWCAP, getauxval(AT_HWCAP));
	AUX(AT_PAGESZ, PAGE_SIZE);
	AUX(AT_CLKTCK, 100);
	AUX(AT_PHDR, ai->phdr);
	AUX(AT_PHENT, sizeof(Elf64_Phdr));
	AUX(AT_PHNUM, ai->phnum);
	AUX(AT_BASE, ai->base);
	AUX(AT_FLAGS, 0);
	AUX(AT_ENTRY, ai->entry);
	AUX(AT_UID, sandbox.uid);
	AUX(AT_EUID, sandbox.uid);
	AUX(AT_GID, sandbox.gid);
	AUX(AT_EGID, sandbox.gid);
	AUX(AT_SECURE, 0);
	AUX(AT_RANDOM, a_random);
	AUX(AT_HWCAP2, getauxval(AT_HWCAP2));
	/* The signal frame's size: pvx's frames are the kernel's, with the host's XSAVE image (push_frame). */
	if (getauxval(51 /* AT_MINSIGSTKSZ */))
		AUX(51, getauxval(51));
	AUX(AT_EXECFN, a_execfn);
	AUX(AT_PLATFORM, a_platform);
	AUX(AT_NULL, 0);
#undef AUX
	/* rsp must be 16-byte aligned at argc (x86-64 psABI 3.4.1). */
	size_t vbytes = n * sizeof(*vec);
	s.used = ((s.used + vbytes + 15) & ~15UL) - vbytes;
	uint64_t rsp = push_bytes(&s, vec, vbytes);
	if (!rsp)
		goto out;
	err = map_stack(t->mm, rsp, exec_stack);
	if (!err)
		err = copy_to_guest(t->mm, rsp, s.buf + s.size - s.used, s.used);
	if (!err)
		err = (long)rsp;
out:
	free(s.buf);
	return err;
}

/*
 * setup_arg_pages(): the stack VMA is the arguments' pages (from rsp up to
 * stack_top) and 128 KiB below them, or reaches down to RLIMIT_STACK if
 * that is less (never above the arguments); it grows down on faults
 * (mm_grow_stack) up to the limit, as a VM_GROWSDOWN VMA does. Mapped
 * once its size is known, so no second call trims it.
 */
static long map_stack(struct mm *mm, uint64_t rsp, bool exec_stack)
{
	uint64_t args = PAGE_ALIGN_DOWN(rsp), floor = mm->stack_top - (mm->rlim_stack & PAGE_MASK);

	if (mm->rlim_stack > mm->stack_top)
		floor = 0;
	uint64_t base = MIN(args, MAX(args - STACK_EXPAND, floor));
	long r = mm_mmap(mm, base, mm->stack_top - base, PROT_READ | PROT_WRITE | (exec_stack ? PROT_EXEC : 0),
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_STACK | MAP_GROWSDOWN, -1, 0);

	return r < 0 ? r : 0;
}

/* See pvx/loader.h: build_stack's image at its largest but for the ASLR gap, which yields. */
long elf_args_fit(char *const argv[], char *const envp[], const char *execfn)
{
	size_t bytes = strlen(execfn) + 1, n = 0;

	for (size_t i = 0; argv[i]; i++, n++)
		bytes += strlen(argv[i]) + 1;
	for (size_t i = 0; envp[i]; i++, n++)
		bytes += strlen(envp[i]) + 1;
	return bytes + STACK_REST(n) <= STACK_IMG_MAX ? 0 : -E2BIG;
}

/* Where the program headers are in guest memory (AT_PHDR). */
static uint64_t phdr_addr(const struct elf_info *ei, uint64_t bias)
{
	for (int i = 0; i < ei->eh.e_phnum; i++)
		if (ei->ph[i].p_type == PT_PHDR)
			return bias + ei->ph[i].p_vaddr;
	for (int i = 0; i < ei->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ei->ph[i];
		if (p->p_type == PT_LOAD && p->p_offset <= ei->eh.e_phoff &&
		    ei->eh.e_phoff < p->p_offset + p->p_filesz)
			return bias + p->p_vaddr + (ei->eh.e_phoff - p->p_offset);
	}
	return 0;
}

/* The page span [*lo, *hi) of the PT_LOAD segments and their largest power-of-two p_align. */
static uint64_t load_span(const struct elf_info *ei, uint64_t *lo, uint64_t *hi)
{
	uint64_t align = PAGE_SIZE;

	*lo = UINT64_MAX;
	*hi = 0;
	for (int i = 0; i < ei->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ei->ph[i];
		if (p->p_type != PT_LOAD)
			continue;
		*lo = MIN(*lo, PAGE_ALIGN_DOWN(p->p_vaddr));
		*hi = MAX(*hi, PAGE_ALIGN_UP(p->p_vaddr + p->p_memsz));
		/* maximum_alignment(): powers of two only, up to 1 GiB here */
		if (p->p_align > align && !(p->p_align & (p->p_align - 1)) && p->p_align <= (1UL << 30))
			align = p->p_align;
	}
	return align;
}

/*
 * Map every PT_LOAD of an image at bias. With reserved (a PROT_NONE
 * mapping of the whole span made first, as elf_map() with total_size),
 * the holes between segments are given back as load_elf_interp() leaves
 * them. Returns the end of the highest segment in *end.
 */
static long map_image(struct mm *mm, int fd, const struct elf_info *ei, uint64_t bias, bool reserved, uint64_t *end)
{
	uint64_t lo, hi, covered;
	long r;

	load_span(ei, &lo, &hi);
	covered = bias + lo;
	*end = 0;
	for (int i = 0; i < ei->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &ei->ph[i];
		if (p->p_type != PT_LOAD)
			continue;
		uint64_t start = PAGE_ALIGN_DOWN(bias + p->p_vaddr);
		if (reserved && start > covered && (r = mm_munmap(mm, covered, start - covered)) < 0)
			return r;
		r = map_segment(mm, fd, p, bias);
		if (r < 0) {
			pr_err("cannot map segment %d at %#lx: %s", i, bias + p->p_vaddr, strerror((int)-r));
			return r;
		}
		covered = MAX(covered, PAGE_ALIGN_UP(bias + p->p_vaddr + p->p_memsz));
		*end = MAX(*end, bias + p->p_vaddr + p->p_memsz);
	}
	if (reserved && bias + hi > covered)
		return mm_munmap(mm, covered, bias + hi - covered);
	return 0;
}

/* The interpreter: ET_DYN where mmap(NULL, total size) would put it, ET_EXEC at its own addresses. */
static long map_interp(struct mm *mm, int fd, const struct elf_info *ei, uint64_t *bias)
{
	uint64_t lo, hi, end;
	long r;

	load_span(ei, &lo, &hi);
	*bias = 0;
	if (ei->eh.e_type == ET_DYN) {
		r = mm_mmap(mm, 0, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r < 0)
			return r;
		*bias = (uint64_t)r - lo;
	}
	return map_image(mm, fd, ei, *bias, ei->eh.e_type == ET_DYN, &end);
}

long elf_load(struct task *t, int fd, const struct elf_info *ei, int ifd, const struct elf_info *iei,
	      char *const argv[], char *const envp[], const char *execfn)
{
	bool aslr = !(t->proc->personality & ADDR_NO_RANDOMIZE);
	struct mm *mm = t->mm;
	uint64_t bias = 0, ibias = 0, end, lo, hi;
	long r;

	/* setup_new_exec() -> arch_pick_mmap_layout(): the stack top and mmap_base move first. */
	mm->stack_top = PVX_STACK_TOP - rnd_pages(aslr, PVX_STACK_RND_MAX);
	mm->mmap_base = mm->stack_top - PVX_STACK_SIZE - PVX_STACK_GAP - rnd_pages(aslr, PVX_MMAP_RND_MAX);
	mm_keep_tables(mm);	/* where Linux's vDSO would be */
	/*
	 * setup_arg_pages(): the stack VMA holds the arguments and 128 KiB
	 * more, no more than RLIMIT_STACK allows; it grows down on faults
	 * (mm_grow_stack) up to the limit, as a VM_GROWSDOWN VMA does.
	 */
	mm_set_rlimits(mm, t->proc->rlim);
	if (ei->eh.e_type == ET_DYN) {
		/* ELF_ET_DYN_BASE + arch_mmap_rnd(), aligned to the largest p_align */
		uint64_t align = load_span(ei, &lo, &hi);
		bias = PVX_ET_DYN_BASE + rnd_pages(aslr, PVX_MMAP_RND_MAX);
		bias = PAGE_ALIGN_DOWN((bias & ~(align - 1)) - lo);
		if (bias + hi > PVX_GUEST_TASK_SIZE)
			return -ENOMEM;
	}
	r = map_image(mm, fd, ei, bias, false, &end);
	if (r < 0)
		return r;
	/* arch_randomize_brk(): the break starts up to 1 GiB past the image. */
	mm->brk_start = mm->brk_cur = PAGE_ALIGN_UP(end) + rnd_pages(aslr, PVX_BRK_RND_MAX);
	if (iei && (r = map_interp(mm, ifd, iei, &ibias)) < 0)
		return r;

	struct auxv_info ai = {
		.phdr = phdr_addr(ei, bias),
		.phnum = ei->eh.e_phnum,
		.base = ibias,
		.entry = bias + ei->eh.e_entry,
		.aslr = aslr,
	};
	r = build_stack(t, &ai, argv, envp, execfn, ei->exec_stack);
	if (r < 0)
		return r;

	struct pvx_regs *regs = &t->regs;
	uint64_t cs = regs->cs, ss = regs->ss, eflags = regs->eflags;
	memset(regs, 0, sizeof(*regs));
	regs->cs = cs;
	regs->ss = ss;
	regs->eflags = eflags;
	regs->rsp = (uint64_t)r;
	regs->rip = iei ? ibias + iei->eh.e_entry : ai.entry;
	return 0;
}
