/* SPDX-License-Identifier: GPL-2.0 */
/* Logging with file:line, in the kernel's pr_* style. */
#ifndef PVX_LOG_H
#define PVX_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern int pvx_log_level;

void pvx_log(enum log_level lvl, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define pr_err(...) pvx_log(LOG_ERR, __FILE__, __LINE__, __VA_ARGS__)
#define pr_warn(...) pvx_log(LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define pr_info(...) pvx_log(LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define pr_debug(...)                                                     \
	do {                                                              \
		if (pvx_log_level >= LOG_DEBUG)                           \
			pvx_log(LOG_DEBUG, __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#endif
