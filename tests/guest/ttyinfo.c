/* ttyinfo: TCGETS/TIOCGWINSZ on fd 0, 1 and 2; prints whether each is a terminal and the window size. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

int main(void)
{
	for (int fd = 0; fd < 3; fd++) {
		struct termios t;
		struct winsize ws;
		memset(&ws, 0, sizeof(ws));
		int r1 = ioctl(fd, TCGETS, &t);
		int e1 = errno;
		int r2 = ioctl(fd, TIOCGWINSZ, &ws);
		int e2 = errno;
		printf("fd %d: TCGETS=%s TIOCGWINSZ=%s", fd, r1 == 0 ? "ok" : e1 == ENOTTY ? "ENOTTY" : "E?",
		       r2 == 0 ? "ok" : e2 == ENOTTY ? "ENOTTY" : "E?");
		if (r2 == 0)
			printf(" rows=%d cols=%d", ws.ws_row, ws.ws_col);
		if (r1 == 0)
			printf(" icanon=%d", !!(t.c_lflag & ICANON));
		printf(" isatty=%d\n", isatty(fd));
	}
	return 0;
}
