/* proc_dev: /proc is a file system of its own to stat (find / -xdev stops there), its directories share it. */
#include <sys/stat.h>

#include "guest.h"

int main(void)
{
	struct stat root, proc, self, fd;

	if (stat("/", &root) || stat("/proc", &proc) || stat("/proc/self", &self) || stat("/proc/self/fd", &fd))
		return 1;
	say("/proc on a device other than /'s: %s\n", yesno(proc.st_dev != root.st_dev));
	say("/proc/self and /proc/self/fd on /proc's: %s\n", yesno(self.st_dev == proc.st_dev && fd.st_dev == proc.st_dev));
	return 0;
}
