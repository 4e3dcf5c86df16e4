// SPDX-License-Identifier: MIT
/*
 * rseq critical sections of the slow paths (x86-64): batch pop and push on
 * a loaded magazine, and the swap of the loaded magazine pointer. The
 * caller holds the CPU's lock, so the magazine pointer is stable and only
 * the fast paths of the same CPU move its count; each section checks that
 * the thread still runs on that CPU and ends in one committing store, so
 * no fast path of the CPU can interleave with it.
 *
 * Locks: none taken here (the caller holds pcp_cpu->lock).
 */
#include "percpu/internal.h"

#if defined(__x86_64__) && !USLAB_VCPU

/*
 * Plain asm with an output (gcc 12 miscompiles asm goto with outputs: it
 * merged a goto label with the fall-through). Out of line, in the
 * __rseq_failure section: 7 = not on @cpu (k = -1), 4 = abort handler
 * after the signature (k = -2); both continue at 6, after the section.
 */
/* Open a section that runs only on @cpu (7: elsewhere). */
#define PCP_RSEQ_BEGIN_ON_CPU						\
	PCP_RSEQ_BEGIN("7f")						\
	"cmpl %%fs:%c[cpu_id](%[off]), %[cpu]\n\t"			\
	"jne 7f\n\t"

#define PCP_RSEQ_FAIL_STUBS(k)						\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	"7:\n\t"							\
	"movq $-1, " k "\n\t"						\
	"jmp 6f\n\t"							\
	PCP_RSEQ_ABORT_STUB("movq $-2, " k "\n\t" "jmp 6f\n\t")	\
	".popsection\n\t"

/*
 * pcp_rseq_pop - move min(@n, count) objects from the top of @m to @out.
 * Mirrored on purpose by pcp_rseq_push below (the same operands, abort
 * stubs and commit; one asm block with a direction would read worse).
 * Return: objects moved, -1 not on @cpu, -2 aborted.
 */
long pcp_rseq_pop(struct pcp_mag *m, int cpu, void **out, unsigned long n)
{
	long off = pcp_rseq_off;
	long k;

	__asm__ __volatile__ (
		PCP_RSEQ_BEGIN_ON_CPU
		"movq %c[count](%[m]), %%rcx\n\t"	/* count */
		"movq %[n], %[k]\n\t"
		"cmpq %%rcx, %[k]\n\t"
		"cmovaq %%rcx, %[k]\n\t"		/* k = min(n, count) */
		"movq %%rcx, %%r8\n\t"
		"subq %[k], %%r8\n\t"			/* new count */
		"xorl %%eax, %%eax\n\t"
		"5:\n\t"
		"cmpq %[k], %%rax\n\t"
		"je 6f\n\t"
		"leaq (%%r8, %%rax), %%r9\n\t"
		"movq %c[objs](%[m], %%r9, 8), %%r9\n\t"
		"movq %%r9, (%[out], %%rax, 8)\n\t"
		"incq %%rax\n\t"
		"jmp 5b\n\t"
		"6:\n\t"
		"movq %%r8, %c[count](%[m])\n\t"		/* commit */
		"2:\n\t"
		PCP_RSEQ_FAIL_STUBS("%[k]")
		"6:\n\t"
		: [k] "=&r" (k)
		: PCP_RSEQ_OPERANDS, [cpu] "r" (cpu), [m] "r" (m),
		  [out] "r" (out), [n] "r" (n),
		  [count] "i" (PCP_MAG_COUNT_OFFSET),
		  [objs] "i" (PCP_MAG_OBJS_OFFSET)
		: "rax", "rcx", "r8", "r9", "memory", "cc");
	return k;
}

/*
 * pcp_rseq_push - copy min(@n, room) objects of @in on top of @m. A
 * deliberate mirror of pcp_rseq_pop (its operands and commit).
 * Return: objects moved, -1 not on @cpu, -2 aborted.
 */
long pcp_rseq_push(struct pcp_mag *m, int cpu, void *const *in,
		   unsigned long n)
{
	long off = pcp_rseq_off;
	long k;

	__asm__ __volatile__ (
		PCP_RSEQ_BEGIN_ON_CPU
		"movq %c[count](%[m]), %%rcx\n\t"	/* count */
		"movq %c[size](%[m]), %[k]\n\t"
		"subq %%rcx, %[k]\n\t"			/* room */
		"cmpq %[n], %[k]\n\t"
		"cmovaq %[n], %[k]\n\t"			/* k = min(n, room) */
		"xorl %%eax, %%eax\n\t"
		"5:\n\t"
		"cmpq %[k], %%rax\n\t"
		"je 6f\n\t"
		"movq (%[in], %%rax, 8), %%r9\n\t"
		"leaq (%%rcx, %%rax), %%r8\n\t"
		"movq %%r9, %c[objs](%[m], %%r8, 8)\n\t"
		"incq %%rax\n\t"
		"jmp 5b\n\t"
		"6:\n\t"
		"addq %[k], %%rcx\n\t"
		"movq %%rcx, %c[count](%[m])\n\t"	/* commit */
		"2:\n\t"
		PCP_RSEQ_FAIL_STUBS("%[k]")
		"6:\n\t"
		: [k] "=&r" (k)
		: PCP_RSEQ_OPERANDS, [cpu] "r" (cpu), [m] "r" (m),
		  [in] "r" (in), [n] "r" (n),
		  [count] "i" (PCP_MAG_COUNT_OFFSET),
		  [size] "i" (PCP_MAG_SIZE_OFFSET),
		  [objs] "i" (PCP_MAG_OBJS_OFFSET)
		: "rax", "rcx", "r8", "r9", "memory", "cc");
	return k;
}

/*
 * pcp_rseq_swap - *@slot = @new_mag, committed on @cpu.
 * Return: 0, -1 not on @cpu, -2 aborted.
 */
long pcp_rseq_swap(struct pcp_mag **slot, int cpu, struct pcp_mag *new_mag)
{
	long off = pcp_rseq_off;
	long k;

	__asm__ __volatile__ (
		PCP_RSEQ_BEGIN_ON_CPU
		"movq %[new_mag], (%[slot])\n\t"	/* commit */
		"2:\n\t"
		"xorl %k[k], %k[k]\n\t"
		PCP_RSEQ_FAIL_STUBS("%[k]")
		"6:\n\t"
		: [k] "=&r" (k)
		: PCP_RSEQ_OPERANDS, [cpu] "r" (cpu), [slot] "r" (slot),
		  [new_mag] "r" (new_mag)
		: "rax", "memory", "cc");
	return k;
}

#else /* no rseq primitive: the mode is never rseq, these are never called */

long pcp_rseq_pop(struct pcp_mag *m, int cpu, void **out, unsigned long n)
{
	return -1;
}

long pcp_rseq_push(struct pcp_mag *m, int cpu, void *const *in,
		   unsigned long n)
{
	return -1;
}

long pcp_rseq_swap(struct pcp_mag **slot, int cpu, struct pcp_mag *new_mag)
{
	return -1;
}

#endif
