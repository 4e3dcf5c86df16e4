// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_unwind_apart.sh's program, run preloaded with
 * libuslab.so (no uslab linked in). It allocates blocks of many sizes
 * (malloc's paths read .rodata), then prints from /proc/self/smaps the
 * resident KiB of the mapping that holds libuslab.so's unwind tables
 * (PT_GNU_EH_FRAME, found by dl_iterate_phdr), and after that checks that
 * a backtrace taken inside the library (a kmem_cache constructor, called
 * by the slab layer) still walks out of it to main(): the tables must be
 * apart, not lost.
 *
 * Output: "unwind_rss=N frames_in_uslab=N reached_main=0|1".
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uintptr_t eh_addr;
static void *frames[64];
static int nframes;

static int find_eh(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	if (!strstr(info->dlpi_name, "libuslab.so"))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh_addr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	return 1;
}

/* Rss in KiB of the mapping that holds @addr, -1 if none */
static long rss_of(uintptr_t addr)
{
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ')) {
			in = addr >= lo && addr < hi;
			continue;
		}
		if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return in ? kb : -1;
}

static void ctor(void *obj)
{
	(void)obj;
	if (!nframes)
		nframes = backtrace(frames, 64);
}

int main(void)
{
	void *(*create)(const char *, unsigned int, unsigned int, unsigned long,
			void (*)(void *));
	void *(*alloc)(void *, unsigned int);
	static void *keep[4096];
	int i, in_uslab = 0, reached_main = 0;
	long rss;

	for (i = 0; i < 4096; i++)
		keep[i] = malloc((size_t)(i * 37) % 70000 + 1);
	for (i = 0; i < 4096; i += 2)
		free(keep[i]);
	dl_iterate_phdr(find_eh, NULL);
	if (!eh_addr) {
		puts("no libuslab.so unwind tables");
		return 2;
	}
	rss = rss_of(eh_addr);

	create = (void *(*)(const char *, unsigned int, unsigned int,
			    unsigned long, void (*)(void *)))
		dlsym(RTLD_DEFAULT, "kmem_cache_create");
	alloc = (void *(*)(void *, unsigned int))
		dlsym(RTLD_DEFAULT, "kmem_cache_alloc");
	if (!create || !alloc || !alloc(create("unwind_test", 64, 0, 0, ctor), 0)) {
		puts("no kmem_cache calls");
		return 2;
	}
	for (i = 0; i < nframes; i++) {
		Dl_info di;

		if (dladdr(frames[i], &di) && di.dli_fname &&
		    strstr(di.dli_fname, "libuslab.so"))
			in_uslab++;
		if ((uintptr_t)frames[i] > (uintptr_t)main &&
		    (uintptr_t)frames[i] < (uintptr_t)main + 4096)
			reached_main = 1;
	}
	printf("unwind_rss=%ld frames_in_uslab=%d reached_main=%d\n", rss,
	       in_uslab, reached_main);
	return 0;
}
