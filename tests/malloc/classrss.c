// SPDX-License-Identifier: MIT
/*
 * classrss: what the first object of a size class costs in written heap
 * pages (tests/malloc/test_malloc_class_rss.sh). Allocates one object of
 * 16 bytes, then one object of each of twelve other sizes (a class each
 * in uslab's kmalloc table: 8 .. 1024 bytes), writes each, and prints
 * the pages written in the mapping that holds them before and after:
 * "first=N classes=K more=M" (pages; M for the K classes).
 *
 * Written pages: present in /proc/self/pagemap and mapped by this process
 * alone (bit 56); a page only read maps the shared zero page.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The mapping of /proc/self/maps that holds @p: [*lo, *hi). */
static int mapping_of(const void *p, uintptr_t *lo, uintptr_t *hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx", &a, &b) == 2 &&
		    (uintptr_t)p >= a && (uintptr_t)p < b) {
			*lo = a;
			*hi = b;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static long written_pages(uintptr_t lo, uintptr_t hi)
{
	static uint64_t ent[4096];
	long n = 0, page = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -1;
	for (uintptr_t a = lo; a < hi; ) {
		size_t want = (hi - a) / page;
		ssize_t got;

		if (want > 4096)
			want = 4096;
		got = pread(fd, ent, want * 8, (off_t)(a / page) * 8);
		if (got <= 0)
			break;
		for (ssize_t i = 0; i < got / 8; i++)
			n += (ent[i] >> 63) && ((ent[i] >> 56) & 1);
		a += (uintptr_t)(got / 8) * page;
	}
	close(fd);
	return n;
}

int main(void)
{
	static const size_t sizes[] = { 8, 32, 48, 64, 96, 128, 192, 256,
					320, 384, 512, 1024 };
	const int k = sizeof(sizes) / sizeof(sizes[0]);
	void *keep[sizeof(sizes) / sizeof(sizes[0])];
	uintptr_t lo, hi;
	char *first = malloc(16);
	long before, after;

	if (!first || !mapping_of(first, &lo, &hi)) {
		fprintf(stderr, "classrss: no mapping holds the first object\n");
		return 1;
	}
	memset(first, 1, 16);
	before = written_pages(lo, hi);
	for (int i = 0; i < k; i++) {
		keep[i] = malloc(sizes[i]);
		if (!keep[i])
			return 1;
		memset(keep[i], 1, sizes[i]);
	}
	after = written_pages(lo, hi);
	printf("first=%ld classes=%d more=%ld\n", before, k, after - before);
	for (int i = 0; i < k; i++)
		free(keep[i]);
	free(first);
	return 0;
}
