// SPDX-License-Identifier: MIT
/* The per-thread words of lib/sigsafe.h (initial-exec TLS: no malloc). */
#include <stddef.h>
#include "lib/sigsafe.h"

__thread unsigned int sigsafe_depth __attribute__((tls_model("initial-exec")));
__thread void *sigsafe_deferred __attribute__((tls_model("initial-exec")));
