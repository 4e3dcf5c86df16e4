// SPDX-License-Identifier: MIT
/* The per-thread block of lib/sigsafe.h (initial-exec TLS: no malloc). */
#include <stddef.h>
#include "lib/sigsafe.h"

__thread struct sigsafe sigsafe __attribute__((tls_model("initial-exec")));
