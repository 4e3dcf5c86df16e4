// SPDX-License-Identifier: MIT
/*
 * rseq critical sections of the slow paths (x86-64): batch pop and push on
 * a CPU's header (its loaded magazine), and closing the header before the
 * magazine is swapped. The caller holds the CPU's lock, so begin and end
 * are stable and only the fast paths of the same CPU move cur; each
 * section checks that
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
 * Every section's end and operands: 2 follows the committing store, 6 the
 * stubs; the result is k; the inputs are the rseq area, @cpu, header @h
 * and its fields' offsets (a section adds its own after a comma).
 */
#define PCP_RSEQ_END_ON_CPU						\
	"2:\n\t"							\
	PCP_RSEQ_FAIL_STUBS("%[k]")					\
	"6:\n\t"							\
	: [k] "=&r" (k)							\
	: PCP_RSEQ_OPERANDS, [cpu] "r" (cpu), [h] "r" (h),		\
	  [cur] "i" (PCP_HDR_CUR), [begin] "i" (PCP_HDR_BEGIN),		\
	  [end] "i" (PCP_HDR_END)

/* k = min(n, %r8), the objects a batch moves; 8 is where k = 0 joins. */
#define PCP_RSEQ_MIN_N							\
	"movq %[n], %[k]\n\t"						\
	"cmpq %%r8, %[k]\n\t"						\
	"cmovaq %%r8, %[k]\n\t"					\
	"8:\n\t"

/* Copy k words from @src to @dst (%rax counts, %r9 carries); then 6. */
#define PCP_RSEQ_COPY_K(src, dst)					\
	"xorl %%eax, %%eax\n\t"					\
	"5:\n\t"							\
	"cmpq %[k], %%rax\n\t"						\
	"je 6f\n\t"							\
	"movq (" src ", %%rax, 8), %%r9\n\t"				\
	"movq %%r9, (" dst ", %%rax, 8)\n\t"				\
	"incq %%rax\n\t"						\
	"jmp 5b\n\t"							\
	"6:\n\t"

/*
 * pcp_rseq_pop - move min(@n, objects) from below @h's cur to @out.
 * pcp_rseq_push below is its mirror: what they share is in the macros
 * above; one asm block with a direction would read worse.
 * Return: objects moved (0 when the header is empty or closed), -1 not
 * on @cpu, -2 aborted.
 */
long pcp_rseq_pop(struct pcp_hdr *h, int cpu, void **out, unsigned long n)
{
	long off = pcp_rseq_off;
	long k;

	__asm__ __volatile__ (
		PCP_RSEQ_BEGIN_ON_CPU
		"movq %c[cur](%[h]), %%rcx\n\t"		/* cur */
		"movq %%rcx, %%r8\n\t"
		"subq %c[begin](%[h]), %%r8\n\t"	/* bytes held */
		"xorl %k[k], %k[k]\n\t"
		"cmpq %c[begin](%[h]), %%rcx\n\t"
		"jbe 8f\n\t"				/* empty or closed */
		"shrq $3, %%r8\n\t"			/* held */
		PCP_RSEQ_MIN_N
		"leaq (, %[k], 8), %%r8\n\t"
		"negq %%r8\n\t"
		"addq %%rcx, %%r8\n\t"			/* new cur */
		PCP_RSEQ_COPY_K("%%r8", "%[out]")
		"movq %%r8, %c[cur](%[h])\n\t"		/* commit */
		PCP_RSEQ_END_ON_CPU, [out] "r" (out), [n] "r" (n)
		: "rax", "rcx", "r8", "r9", "memory", "cc");
	return k;
}

/*
 * pcp_rseq_push - copy min(@n, room) objects of @in at @h's cur, the
 * mirror of pcp_rseq_pop.
 * Return: objects moved (0 when full or closed), -1 not on @cpu, -2
 * aborted.
 */
long pcp_rseq_push(struct pcp_hdr *h, int cpu, void *const *in,
		   unsigned long n)
{
	long off = pcp_rseq_off;
	long k;

	__asm__ __volatile__ (
		PCP_RSEQ_BEGIN_ON_CPU
		"movq %c[cur](%[h]), %%rcx\n\t"		/* cur */
		"movq %c[end](%[h]), %%r8\n\t"
		"xorl %k[k], %k[k]\n\t"
		"cmpq %%r8, %%rcx\n\t"
		"jae 8f\n\t"				/* full or closed */
		"subq %%rcx, %%r8\n\t"
		"shrq $3, %%r8\n\t"			/* room */
		PCP_RSEQ_MIN_N
		PCP_RSEQ_COPY_K("%[in]", "%%rcx")
		"leaq (%%rcx, %[k], 8), %%rcx\n\t"
		"movq %%rcx, %c[cur](%[h])\n\t"		/* commit */
		PCP_RSEQ_END_ON_CPU, [in] "r" (in), [n] "r" (n)
		: "rax", "rcx", "r8", "r9", "memory", "cc");
	return k;
}

/*
 * pcp_rseq_close - close @h on @cpu: end = 0 (frees miss from here on,
 * allocs may still pop), then begin = ~0 (commit: both miss). Every state
 * on the way is one the fast paths read correctly, so an abort between
 * the two stores leaves nothing to undo.
 * Return: cur at the commit (>= 0, a pointer), -1 not on @cpu, -2 aborted.
 */
long pcp_rseq_close(struct pcp_hdr *h, int cpu)
{
	long off = pcp_rseq_off;
	long k;

	__asm__ __volatile__ (
		PCP_RSEQ_BEGIN_ON_CPU
		"movq $0, %c[end](%[h])\n\t"
		"movq %c[cur](%[h]), %[k]\n\t"
		"movq $-1, %c[begin](%[h])\n\t"		/* commit */
		PCP_RSEQ_END_ON_CPU
		: "rax", "rcx", "memory", "cc");
	return k;
}

#else /* no rseq primitive: the mode is never rseq, these are never called */

long pcp_rseq_pop(struct pcp_hdr *h, int cpu, void **out, unsigned long n)
{
	return -1;
}

long pcp_rseq_push(struct pcp_hdr *h, int cpu, void *const *in,
		   unsigned long n)
{
	return -1;
}

long pcp_rseq_close(struct pcp_hdr *h, int cpu)
{
	return -1;
}

#endif
