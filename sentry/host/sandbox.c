// SPDX-License-Identifier: GPL-2.0
/* The run's configuration (pvx/task.h: struct sandbox), set by main.c from the command line. */
#include "pvx/task.h"

struct sandbox sandbox;
