// SPDX-License-Identifier: MIT
/*
 * `uslab record -p PID`: the recorder loaded into a running process (with
 * gdb, tools/uslab/record-attach.c) cannot interpose by LD_PRELOAD, so it
 * redirects the process's calls instead, as heaptrack -p does: in every
 * loaded object but itself, libunwind and the dynamic loader, each GOT
 * slot (JUMP_SLOT, GLOB_DAT) bound to a malloc-family name is pointed at
 * the recorder's wrapper, the old value kept; detach writes every old
 * value back. A slot inside PT_GNU_RELRO is made writable for the store
 * and read-only again. The table of patched slots is one anonymous
 * mapping; nothing here allocates. Objects dlopen'd after attach are not
 * patched (docs/sim.md, "Attaching").
 *
 * Locks: none of its own; attach and detach run from one debugger call at
 * a time. A slot is one aligned 8-byte store: a thread calling through it
 * meanwhile gets the old or the new function, both whole.
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tools/record/record.h"

struct got_slot {
	void **slot;
	void *old;
	bool relro;
};

#define GOT_SLOTS_MAX	(1u << 16)

static struct got_slot *slots;
static size_t nslots;

struct got_ctx {
	const char *const *names;
	void *const *fns;
	unsigned int n;
	uintptr_t skip[4];		/* bases of objects left alone */
	unsigned int nskip;
};

static bool in_relro(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_RELRO && a >= info->dlpi_addr + ph->p_vaddr &&
		    a < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
			return true;
	}
	return false;
}

static int set_slot(void **slot, void *v, bool relro)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(pg - 1);

	if (relro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE))
		return -1;
	__atomic_store_n(slot, v, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)page, (size_t)pg, PROT_READ);
	return 0;
}

static void patch_relocs(const struct dl_phdr_info *info, struct got_ctx *c,
			 const ElfW(Rela) *rel, size_t bytes, const ElfW(Sym) *symtab,
			 const char *strtab)
{
	for (size_t i = 0; i < bytes / sizeof(*rel); i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		const char *name;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
		for (unsigned int k = 0; k < c->n; k++) {
			void **slot = (void **)(info->dlpi_addr + rel[i].r_offset);
			bool relro;

			if (strcmp(name, c->names[k]))
				continue;
			if (nslots == GOT_SLOTS_MAX || *slot == c->fns[k])
				break;
			relro = in_relro(info, (uintptr_t)slot);
			slots[nslots] = (struct got_slot){ .slot = slot, .old = *slot, .relro = relro };
			if (!set_slot(slot, c->fns[k], relro))
				nslots++;
			break;
		}
	}
}

/* A dynamic entry's address: the loader relocates them in place, the
 * vDSO's are left as offsets. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, uintptr_t v)
{
	return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct got_ctx *c = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL, *base;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t pltrelsz = 0, relasz = 0;

	(void)size;
	for (unsigned int i = 0; i < c->nskip; i++)
		if (info->dlpi_addr == c->skip[i])
			return 0;
	base = strrchr(info->dlpi_name ? info->dlpi_name : "", '/');
	base = base ? base + 1 : info->dlpi_name ? info->dlpi_name : "";
	if (!strncmp(base, "ld-linux", 8) || !strncmp(base, "linux-vdso", 10) ||
	    !strncmp(base, "libunwind", 9))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
		case DT_RELA: rela = (const ElfW(Rela) *)dyn_ptr(info, dyn->d_un.d_ptr); break;
		case DT_RELASZ: relasz = dyn->d_un.d_val; break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	if (jmprel)
		patch_relocs(info, c, jmprel, pltrelsz, symtab, strtab);
	if (rela)
		patch_relocs(info, c, rela, relasz, symtab, strtab);
	return 0;
}

/*
 * rec_got_patch - point every object's GOT slots for @names[i] at @fns[i]
 * (@n of them), leaving the objects at @skip (load bases, @nskip) alone.
 * Return: the slots patched, or -1 when the table could not be mapped.
 */
long rec_got_patch(const char *const *names, void *const *fns, unsigned int n,
		   const uintptr_t *skip, unsigned int nskip)
{
	struct got_ctx c = { .names = names, .fns = fns, .n = n };

	if (!slots) {
		void *p = mmap(NULL, GOT_SLOTS_MAX * sizeof(*slots), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		slots = p;
	}
	for (unsigned int i = 0; i < nskip && i < 4; i++)
		c.skip[c.nskip++] = skip[i];
	dl_iterate_phdr(patch_object, &c);
	return (long)nslots;
}

/* rec_got_restore - every patched slot back to its old value. */
void rec_got_restore(void)
{
	while (nslots) {
		nslots--;
		set_slot(slots[nslots].slot, slots[nslots].old, slots[nslots].relro);
	}
}
