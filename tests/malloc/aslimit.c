// SPDX-License-Identifier: MIT
/*
 * The heap under an address-space limit (tests/malloc/test_malloc_aslimit.sh),
 * run preloaded and on glibc alike:
 *
 *   aslimit fill SIZE        malloc SIZE-byte blocks until NULL (errno must
 *                            be ENOMEM), none written; prints "mib=N" served
 *   aslimit runtime MIB      setrlimit(RLIMIT_AS) to the address space in
 *                            use now plus MIB, then: the program's own mmap
 *                            of MIB/4 works, 1 MiB blocks until NULL
 *                            ("mib=N"), every block freed and malloc_trim:
 *                            the program's own mmap of MIB/2 works again
 *                            (the heap gave its address space back)
 *   aslimit cap MIB          setrlimit(RLIMIT_AS) to MIB, whatever the
 *                            process uses now (what a sandbox or a test
 *                            harness sets from inside), then 1 MiB blocks
 *                            until NULL: prints "mib=N" served
 *
 * Exit 0 when every step did what it says, 1 with a message otherwise.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

static void die(const char *what)
{
	fprintf(stderr, "aslimit: %s\n", what);
	exit(1);
}

/* VmSize of this process in bytes. */
static size_t vm_size(void)
{
	char line[256];
	size_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		die("no /proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
			break;
	fclose(f);
	return kb << 10;
}

/* The program's own mapping of @bytes: can it have one? */
static int own_mmap_works(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	munmap(p, bytes);
	return 1;
}

/* Blocks of @size until NULL; they are linked through their first word. */
static size_t fill(size_t size, void **list)
{
	size_t n = 0;
	void **p;

	while ((p = malloc(size))) {
		*p = *list;
		*list = p;
		n++;
		if (n * size > ((size_t)64 << 30))
			die("64 GiB served under the limit");
	}
	if (errno != ENOMEM)
		die("malloc failed without ENOMEM");
	return n * size;
}

static void release(void *list)
{
	while (list) {
		void *next = *(void **)list;

		free(list);
		list = next;
	}
}

int main(int argc, char **argv)
{
	void *list = NULL;

	if (argc != 3)
		die("usage: aslimit fill SIZE | runtime MIB | cap MIB");
	free(malloc(16));	/* the allocator is set up */
	if (!strcmp(argv[1], "fill")) {
		size_t size = strtoul(argv[2], NULL, 0), n = 0;

		/* nothing written: the blocks go with the process */
		while (malloc(size))
			if (++n * size > ((size_t)64 << 30))
				die("64 GiB served under the limit");
		if (errno != ENOMEM)
			die("malloc failed without ENOMEM");
		printf("mib=%zu\n", (n * size) >> 20);
		return 0;
	}
	if (!strcmp(argv[1], "runtime")) {
		size_t room = strtoul(argv[2], NULL, 0) << 20, got;
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = vm_size() + room;
		if (setrlimit(RLIMIT_AS, &rl))
			die("setrlimit");
		if (!own_mmap_works(room / 4))
			die("the program's own mmap fails under the new limit");
		got = fill(1 << 20, &list);
		printf("mib=%zu\n", got >> 20);
		release(list);
		malloc_trim(0);
		if (!own_mmap_works(room / 2))
			die("after free and malloc_trim the program's own mmap still fails");
		return 0;
	}
	if (!strcmp(argv[1], "cap")) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = strtoul(argv[2], NULL, 0) << 20;
		if (setrlimit(RLIMIT_AS, &rl))
			die("setrlimit");
		printf("mib=%zu\n", fill(1 << 20, &list) >> 20);
		return 0;
	}
	die("unknown case");
	return 1;
}
