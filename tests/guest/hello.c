/* hello: the smallest guest; prints a greeting, argc and each argv entry. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	printf("hello, world\n");
	printf("argc=%d\n", argc);
	for (int i = 0; i < argc; i++) {
		/* argv[0] is the path the test passed; print only its length-independent tail */
		const char *s = argv[i];
		if (i == 0) {
			const char *slash = strrchr(s, '/');
			s = slash ? slash + 1 : s;
		}
		printf("argv[%d]=<%s> len=%zu\n", i, s, strlen(argv[i]));
	}
	printf("argv[argc]=%s\n", argv[argc] == NULL ? "NULL" : "not-NULL");
	fprintf(stderr, "hello, stderr\n");
	return 0;
}
