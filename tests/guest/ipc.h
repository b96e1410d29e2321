/* Helpers of the System V IPC test guests (tests/guest/ipc_*.c). */
#ifndef PVX_TEST_IPC_H
#define PVX_TEST_IPC_H

#include "guest.h"

/* errname() and the errnos IPC adds. */
static __attribute__((unused)) const char *ipc_err(int e)
{
	switch (e) {
	case ENOSPC: return "ENOSPC";
	case E2BIG: return "E2BIG";
	case EIDRM: return "EIDRM";
	case ENOMSG: return "ENOMSG";
	case ERANGE: return "ERANGE";
	case EFBIG: return "EFBIG";
	default: return errname(e);
	}
}

/* "what: ok" or "what: ERRNO" for a call that returned r. */
static __attribute__((unused)) void chk(const char *what, long r)
{
	say("%s: %s\n", what, r < 0 ? ipc_err(errno) : "ok");
}

#endif
