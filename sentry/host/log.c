// SPDX-License-Identifier: GPL-2.0
/* pr_* output: "pvx: file:line: message" on stderr; file:line only with --debug. */
#include <stdarg.h>
#include <stdio.h>

#include "pvx/log.h"

int pvx_log_level = LOG_WARN;

void pvx_log(enum log_level lvl, const char *file, int line, const char *fmt, ...)
{
	static const char *const tag[] = { "error", "warning", "info", "debug" };
	char msg[1024];
	va_list ap;

	if ((int)lvl > pvx_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pvx_log_level >= LOG_DEBUG)
		fprintf(stderr, "pvx: %s:%d: %s: %s\n", file, line, tag[lvl], msg);
	else
		fprintf(stderr, "pvx: %s: %s\n", tag[lvl], msg);
}
