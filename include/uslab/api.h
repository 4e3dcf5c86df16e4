/* SPDX-License-Identifier: MIT */
/*
 * What every public header needs first: the configuration the library was
 * built with, and the mark of an exported call.
 *
 * Inside the tree the build passes the generated autoconf.h with -include
 * and defines USLAB_INTERNAL; an installed header finds the copy that
 * `make install` puts next to it (<uslab/autoconf.h>).
 *
 * USLAB_API marks the calls libuslab.so exports. The same names, with their
 * version, are listed in malloc/libuslab.map; everything else in the shared
 * library is hidden (-fvisibility=hidden), and tests/malloc/test_malloc_install.sh
 * checks the exported set against the map.
 */
#ifndef USLAB_API_H
#define USLAB_API_H

#ifndef CONFIG_PAGE_MAX_ORDER
#include "uslab/autoconf.h"
#endif

#define USLAB_API	__attribute__((__visibility__("default")))

#endif /* USLAB_API_H */
