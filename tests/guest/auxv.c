/* auxv: checks the auxiliary vector the loader built against the running image. */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* Defined by GNU ld at the start of the first PT_LOAD (the ELF header). */
extern const Elf64_Ehdr __ehdr_start;

static const char *yesno(int c) { return c ? "yes" : "no"; }

int main(int argc, char **argv, char **envp)
{
	const Elf64_Ehdr *eh = &__ehdr_start;
	unsigned long phdr = getauxval(AT_PHDR);
	unsigned long phnum = getauxval(AT_PHNUM);
	unsigned long rnd = getauxval(AT_RANDOM);
	unsigned long execfn = getauxval(AT_EXECFN);
	(void)argc;

	printf("AT_PAGESZ=%lu\n", getauxval(AT_PAGESZ));
	printf("AT_PHENT=%lu\n", getauxval(AT_PHENT));
	printf("AT_PHNUM==e_phnum: %s\n", yesno(phnum == eh->e_phnum));
	printf("AT_PHDR==ehdr+e_phoff: %s\n",
	       yesno(phdr == (unsigned long)eh + eh->e_phoff));
	printf("AT_ENTRY==e_entry: %s\n",
	       yesno(getauxval(AT_ENTRY) == eh->e_entry ||
		  getauxval(AT_ENTRY) == (unsigned long)eh + eh->e_entry));
	/* AT_PHDR must point at readable program headers including a PT_LOAD */
	int loads = 0;
	if (phdr) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)phdr;
		for (unsigned long i = 0; i < phnum; i++)
			loads += ph[i].p_type == PT_LOAD;
	}
	printf("PT_LOAD via AT_PHDR>0: %s\n", yesno(loads > 0));
	printf("AT_RANDOM nonnull: %s\n", yesno(rnd != 0));
	if (rnd) {
		const unsigned char *r = (const unsigned char *)rnd;
		int nz = 0;
		for (int i = 0; i < 16; i++)
			nz |= r[i];
		printf("AT_RANDOM 16 bytes not all zero: %s\n", yesno(nz != 0));
	}
	printf("AT_EXECFN nonnull: %s\n", yesno(execfn != 0));
	if (execfn)
		printf("AT_EXECFN==argv[0]: %s\n", yesno(strcmp((char *)execfn, argv[0]) == 0));
	printf("AT_UID==getuid: %s\n", yesno(getauxval(AT_UID) == getuid()));
	printf("AT_EUID==geteuid: %s\n", yesno(getauxval(AT_EUID) == geteuid()));
	printf("AT_GID==getgid: %s\n", yesno(getauxval(AT_GID) == getgid()));
	printf("AT_EGID==getegid: %s\n", yesno(getauxval(AT_EGID) == getegid()));
	printf("AT_SECURE=%lu\n", getauxval(AT_SECURE));
	printf("AT_CLKTCK=%lu\n", getauxval(AT_CLKTCK));
	printf("AT_HWCAP nonzero: %s\n", yesno(getauxval(AT_HWCAP) != 0));
	/* the stack pointer region: argv strings live above envp pointers */
	printf("argv[0] above envp: %s\n", yesno((uintptr_t)argv[0] > (uintptr_t)envp));
	return 0;
}
