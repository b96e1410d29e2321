// SPDX-License-Identifier: GPL-2.0
/* The run's configuration (pvx/sandbox.h), set by main.c from the command line. */
#include "pvx/sandbox.h"

struct sandbox sandbox;
