/* sec_stub_scan: a hostile guest that looks for host process ids in the stub's memory it can read (issue 11,
 * finding 10). It starts threads and has one kicked by a signal while it runs (the sentry then interrupts
 * its stub thread), prints "ready", waits for the file IDS_FILE (host tids and pids written by the test),
 * then reads every page it can in the stub's range and reports each 32-bit word equal to one of them.
 * A word that is also the stub program's own bytes at that address (STUB_FILE, the ELF pvx embeds, mapped
 * read-only from its PT_LOAD segments, whole pages of it) is a constant of its code that happens to equal an id: on a fresh
 * machine pids are small and 6 KiB of code holds such numbers. It is reported as "static", not "found".
 * So is a word of the stub's vDSO that the host's own vDSO (VDSO_FILE, written natively by dump-vdso: the
 * same kernel, the same bytes) has at the same offset (a CI run once failed at pid 1006 on such a word).
 * A word of the vvar pages before the vDSO is reported as "vvar": the kernel writes only its clocks and
 * getrandom's state there (a ptrace run once "found" 19007 at 0x7ffff7ffb00c, a clock word), never a pid.
 * So is a word of the seccomp stub's control page (its filters, filled by the sentry at run time) that
 * another pvx run's control page (CTL_FILE, written by dump-ctl under pvx: other pids) has at the same
 * offset: a CI run once "found" 12288 at 0x7ff00008052c, the filters' constant 0x3000, when a stub's pid
 * was 12288. An id the sentry wrote there would differ between the two runs and still be "found".
 * usage: sec_stub_scan IDS_FILE STUB_FILE [VDSO_FILE [CTL_FILE]]   prints "found ID at ADDR" lines, then
 *                                                                  "scanned N pages"
 *        sec_stub_scan dump-vdso VDSO_FILE               (natively) writes this process's vDSO there
 *        sec_stub_scan dump-ctl                          (under pvx) writes the stub's control page to stdout,
 *                                                        nothing where there is none */
#define _GNU_SOURCE
#include <elf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "guest.h"
#include "stubgadget.h"

#define MASK 0x5bd1e995u	/* ids are kept masked: a register spilled into a stub frame never holds one */
#define MAX_IDS 256

static unsigned masked[MAX_IDS];
static int nids;
static volatile int kicks, stop;
static unsigned char *image;	/* STUB_FILE's bytes */
static size_t image_len;

/* Is the 32-bit word at addr the stub image's own (a PT_LOAD of STUB_FILE maps it there, from the file)? */
static int in_image(uintptr_t addr, uint32_t v)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;

	if (image_len < sizeof(*eh) || eh->e_phoff > image_len || eh->e_phnum > (image_len - eh->e_phoff) / sizeof(Elf64_Phdr))
		return 0;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(image + eh->e_phoff) + i;
		/*
		 * The kernel maps whole pages of the file: past p_filesz, the last page holds the file's next
		 * bytes (its symbol table: a symbol at 0x7ff000001200 is the word 4608, once a CI pid).
		 */
		uint64_t span = ((ph->p_vaddr & 4095) + ph->p_filesz + 4095) / 4096 * 4096 - (ph->p_vaddr & 4095);
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || addr < ph->p_vaddr || addr - ph->p_vaddr + 4 > span ||
		    ph->p_offset > image_len || addr - ph->p_vaddr + 4 > image_len - ph->p_offset)
			continue;
		uint32_t w;
		memcpy(&w, image + ph->p_offset + (addr - ph->p_vaddr), 4);
		return w == v;
	}
	return 0;
}

static unsigned char *load_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		say("no file %s\n", path);
		exit(4);
	}
	unsigned char *b = malloc(1 << 20);
	*len = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

static unsigned char *vdso;	/* VDSO_FILE's bytes, the host's vDSO */
static size_t vdso_len;
static uintptr_t vdso_base;	/* where the stub's vDSO image starts (its ELF header), 0: not seen */

/* Is the 32-bit word at addr v in a dump (buf, len) of the memory that starts at base (0: none seen)? */
static int in_dump(const unsigned char *buf, size_t len, uintptr_t base, uintptr_t addr, uint32_t v)
{
	uint32_t w;

	if (!buf || !base || addr < base || addr - base + 4 > len)
		return 0;
	memcpy(&w, buf + (addr - base), 4);
	return w == v;
}

/* dump-vdso: this process's [vdso] mapping, whole, into path. */
static int dump_vdso(const char *path)
{
	FILE *m = fopen("/proc/self/maps", "r"), *out = fopen(path, "wb");
	char line[512];
	unsigned long lo = 0, hi = 0;

	while (m && fgets(line, sizeof(line), m))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	if (!out || !lo || hi <= lo || fwrite((void *)lo, 1, hi - lo, out) != hi - lo)
		return 1;
	return fclose(out) != 0;
}

#define CTL_LO (STUB_BASE + 0x80000)	/* the seccomp stub's control page (include/pvx/stub_layout.h STUB_CTL_ADDR) */
#define CTL_PAGES 3			/* STUB_CTL_SIZE */

static unsigned char *ctl;	/* CTL_FILE's bytes: another run's control page */
static size_t ctl_len;

/*
 * dump-ctl: the readable pages of the control page, from its start, to stdout (through a copy of our
 * own: the sentry reads a write's buffer from guest memory only, never from the stub's range).
 */
static int dump_ctl(void)
{
	static unsigned char page[PG];

	probe_init();
	for (unsigned i = 0; i < CTL_PAGES && readable(CTL_LO + i * PG); i++) {
		memcpy(page, (void *)(CTL_LO + i * PG), PG);
		if (fwrite(page, 1, PG, stdout) != PG)
			return 1;
	}
	return fflush(stdout) != 0;
}

static void on_usr1(int sig)
{
	(void)sig;
	kicks++;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!stop) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

#define VDSO_LO 0x7ffff7f00000UL	/* where the stub's vvar and vDSO lie, when it runs */
#define VDSO_HI 0x7ffff8000000UL

/* The stub's vDSO image: the first page of [VDSO_LO, VDSO_HI) that starts with "\177ELF" (vvar is before it). */
static void find_vdso(void)
{
	for (uintptr_t pg = VDSO_LO; pg < VDSO_HI && !vdso_base; pg += PG)
		if (readable(pg) && *(const volatile uint32_t *)pg == 0x464c457f)
			vdso_base = pg;
}

static void scan(uintptr_t from, uintptr_t to, long *pages)
{
	for (uintptr_t pg = from; pg < to; pg += PG) {
		if (!readable(pg))
			continue;
		++*pages;
		const volatile uint32_t *w = (const volatile uint32_t *)pg;
		int vvar = vdso_base && pg >= VDSO_LO && pg < vdso_base;
		for (size_t i = 0; i < PG / 4; i++) {
			unsigned v = w[i] ^ MASK;
			for (int k = 0; k < nids; k++)
				if (v == masked[k])
					say("%s %u at %#lx\n",
					    vvar ? "vvar"
					    : in_image(pg + 4 * i, w[i]) ||
							  in_dump(vdso, vdso_len, vdso_base, pg + 4 * i, w[i]) ||
							  in_dump(ctl, ctl_len, CTL_LO, pg + 4 * i, w[i]) ? "static" : "found",
					    w[i], (unsigned long)(pg + 4 * i));
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "dump-vdso"))
		return dump_vdso(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "dump-ctl"))
		return dump_ctl();
	if (argc < 3)
		return 2;
	image = load_file(argv[2], &image_len);
	if (argc > 3)
		vdso = load_file(argv[3], &vdso_len);
	if (argc > 4)
		ctl = load_file(argv[4], &ctl_len);
	probe_init();
	signal(SIGUSR1, on_usr1);
	pthread_t t[3];
	pthread_create(&t[0], NULL, spinner, NULL);
	pthread_create(&t[1], NULL, sleeper, NULL);
	pthread_create(&t[2], NULL, sleeper, NULL);
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 5000000 };
		pthread_kill(t[0], SIGUSR1);
		nanosleep(&ts, NULL);
	}
	say("ready\n");
	FILE *f = NULL;
	for (int i = 0; i < 2000 && !(f = fopen(argv[1], "r")); i++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	if (!f) {
		say("no ids file\n");
		return 3;
	}
	unsigned id;
	while (nids < MAX_IDS && fscanf(f, "%u", &id) == 1)
		masked[nids++] = id ^ MASK;
	fclose(f);
	long pages = 0;
	scan(STUB_BASE, STUB_BASE + (16UL << 20), &pages);	/* code, control page, shared regions */
	find_vdso();
	scan(VDSO_LO, VDSO_HI, &pages);	/* the stub's vvar and vDSO, when it runs */
	scan(0x7ffffff00000UL, 0x800000000000UL, &pages);	/* the stub's own stack */
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	say("ids %d kicks %s scanned %ld pages\n", nids, kicks ? "some" : "none", pages);
	return 0;
}
