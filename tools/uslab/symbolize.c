// SPDX-License-Identifier: MIT
/*
 * Report-time symbolization of recorded call stacks (`uslab record -g`):
 * a frame is an address in a mapped file of a process image; elfutils' libdw
 * (libdwfl) turns the file offset into the function and the source file and
 * line, from the file's own DWARF or its separate debug file
 * (/usr/lib/debug, build-id). One Dwfl per file, opened on first use and
 * kept, found by its path's hash. The path comes from the trace: only a
 * regular file is read (opened non-blocking and checked with fstat, so a
 * FIFO or a device named there never blocks or is read). No locks: one
 * report, one thread.
 */
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "tools/uslab/builtin.h"

struct sym_file {
	char *path;
	Dwfl *dwfl;		/* NULL: the file could not be read */
	Dwfl_Module *mod;
	size_t next;		/* index + 1 of the next file of the same hash */
};

struct symbolizer {
	struct sym_file *files;
	size_t n, cap;
	struct hmap by_hash;	/* path hash -> index + 1 of its first file */
};

static uint64_t path_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h == UINT64_MAX ? 0 : h;	/* hmap keys: all but UINT64_MAX */
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(struct symbolizer));

	if (s)
		hmap_init(&s->by_hash);
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (s->files[i].dwfl)
			dwfl_end(s->files[i].dwfl);
		free(s->files[i].path);
	}
	free(s->files);
	hmap_destroy(&s->by_hash);
	free(s);
}

/*
 * @path opened for libdwfl only when it is a regular file: O_NONBLOCK so
 * that opening a FIFO returns at once, fstat on what was opened. Return:
 * the descriptor, or -1.
 */
static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct sym_file *open_file(struct symbolizer *s, const char *path)
{
	uint64_t h = path_hash(path), *first = hmap_find(&s->by_hash, h);
	struct sym_file *f;
	int fd;

	for (size_t i = first ? *first : 0; i; i = s->files[i - 1].next)
		if (!strcmp(s->files[i - 1].path, path))
			return &s->files[i - 1];
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;

		f = realloc(s->files, cap * sizeof(*f));
		if (!f)
			return NULL;
		s->files = f;
		s->cap = cap;
	}
	f = &s->files[s->n];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	f->next = first ? *first : 0;
	if (first)
		*first = s->n + 1;
	else if (hmap_insert(&s->by_hash, h, s->n + 1)) {
		free(f->path);
		return NULL;
	}
	s->n++;
	fd = open_regular(path);
	if (fd < 0)
		return f;
	f->dwfl = dwfl_begin(&callbacks);
	if (!f->dwfl) {
		close(fd);
		return f;
	}
	/* on success the module owns @fd (dwfl_end closes it) */
	f->mod = dwfl_report_offline(f->dwfl, path, path, fd);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		if (fcntl(fd, F_GETFD) >= 0)
			close(fd);
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
	}
	return f;
}

/* File offset -> the module's address: the PT_LOAD segment holding it. */
static bool offset_to_addr(Dwfl_Module *mod, uint64_t off, Dwarf_Addr *addr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*addr = off - ph.p_offset + ph.p_vaddr + bias;
			return true;
		}
	}
	return false;
}

int symbolize(struct symbolizer *s, const char *path, uint64_t off,
	      struct sym_info *out)
{
	struct sym_file *f = open_file(s, path);
	Dwarf_Addr addr;
	Dwfl_Line *line;
	const char *name, *src;
	int lineno = 0;

	out->func[0] = out->file[0] = 0;
	out->line = 0;
	if (!f || !f->dwfl || !offset_to_addr(f->mod, off, &addr))
		return -1;
	name = dwfl_module_addrname(f->mod, addr);
	if (name)
		snprintf(out->func, sizeof(out->func), "%s", name);
	line = dwfl_module_getsrc(f->mod, addr);
	if (line) {
		src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (src) {
			snprintf(out->file, sizeof(out->file), "%s", src);
			out->line = lineno;
		}
	}
	return name || out->file[0] ? 0 : -1;
}
