// SPDX-License-Identifier: MIT
/*
 * CPUs, the mode, rseq registration and the remote fence.
 *
 * The mode is chosen once per process by pcp_init():
 *   off       CONFIG_PERCPU_CACHE=n
 *   vcpu      built with USLAB_VCPU=1 (the simulator's library): the CPU
 *             is lib/cpuclock.h's virtual one, which sim/ sets
 *   rseq      x86-64, CONFIG_PERCPU_RSEQ, not under valgrind, an rseq area
 *             registered for the initializing thread (glibc's, or ours when
 *             glibc did not register), and membarrier's
 *             PRIVATE_EXPEDITED_RSEQ command registered
 *   fallback  everything else: a lock per CPU, CPU from uslab_cpu_id()
 *             (glibc's rseq area or sched_getcpu())
 *
 * pcp_rseq_off is the TLS offset of the rseq area the fast paths read. In
 * every mode but rseq (and until the mode is chosen) it names
 * pcp_idle_rseq, an area never given to the kernel: its cpu_id stays -1,
 * so the fast paths always fall into the slow path and no fast path can
 * run beside a locked path. When rseq mode is refused after our own area
 * was registered (membarrier fails: kernels before 5.10, seccomp), that
 * area is unregistered again; pcp_rseq_off never names it outside rseq
 * mode, even if unregistering fails.
 *
 * Locks: none (pcp_init is serialized by pthread_once).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <valgrind/valgrind.h>
#include "lib/cpuclock.h"
#include "lib/log.h"
#include "uslab/page_alloc.h"
#include "percpu/internal.h"

static_assert(PCP_RSEQ_SIG == RSEQ_SIG, "rseq signature");
static_assert(offsetof(struct rseq, cpu_id) == PCP_RSEQ_CPU_ID_OFFSET &&
	      offsetof(struct rseq, rseq_cs) == PCP_RSEQ_CS_OFFSET,
	      "the fast paths read cpu_id and arm rseq_cs at these offsets");

long pcp_rseq_off;
enum pcp_mode_id pcp_mode_cur;
unsigned int pcp_nr_cpus;

/* Registered only when glibc has not registered its own. */
static __thread struct rseq pcp_own_rseq
	__attribute__((tls_model("initial-exec"), aligned(32))) = {
	.cpu_id = (uint32_t)RSEQ_CPU_ID_UNINITIALIZED,
};
/* Never registered: what the fast paths read outside rseq mode. */
static __thread struct rseq pcp_idle_rseq
	__attribute__((tls_model("initial-exec"), aligned(32))) = {
	.cpu_id = (uint32_t)RSEQ_CPU_ID_UNINITIALIZED,
};
static bool pcp_own_area;	/* rseq mode on our own area */
static bool pcp_fence_flag_cpu;	/* MEMBARRIER_CMD_FLAG_CPU works */

static pthread_once_t pcp_once = PTHREAD_ONCE_INIT;

static const char *const pcp_mode_names[] = {
	[PCP_MODE_OFF] = "off",
	[PCP_MODE_RSEQ] = "rseq",
	[PCP_MODE_FALLBACK] = "fallback",
	[PCP_MODE_VCPU] = "vcpu",
};

/**
 * pcp_parse_cpulist - highest CPU in a list such as "0-3,8,10-11\n".
 * @max_id: set to the highest id.
 * Return: 0, or -EINVAL when @s is not a CPU list.
 */
int pcp_parse_cpulist(const char *s, unsigned int *max_id)
{
	unsigned long hi = 0;
	bool any = false;

	while (*s && *s != '\n') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -EINVAL;
			s = end;
		}
		if (b > hi)
			hi = b;
		any = true;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	if (!any || hi > 65535)
		return -EINVAL;
	*max_id = (unsigned int)hi;
	return 0;
}

/*
 * Possible CPUs from sysfs with open/read (no malloc, no stdio). A hint
 * only: a sandbox may show a file that names fewer CPUs than the process
 * runs on (LXCFS, gVisor, rr, a bind mount). Return: 0 when unreadable.
 */
static unsigned int pcp_read_possible(void)
{
	char buf[512];
	unsigned int max_id;
	ssize_t n = -1;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = '\0';
		if (!pcp_parse_cpulist(buf, &max_id))
			return max_id + 1;
	}
	return 0;
}

/*
 * The bound the kernel itself guarantees: sched_getaffinity (the system
 * call, not glibc's wrapper, which clears and hides the length) returns
 * the size of the kernel's cpumask in bytes, and no CPU number the kernel
 * hands out (rseq cpu_id, getcpu) reaches 8 times that (nr_cpu_ids, or
 * NR_CPUS, rounded up to a long). Return: that many CPU ids, or
 * PCP_MAX_CPU_IDS + 1 when the mask is larger than we index (fallback
 * mode), or PCP_MAX_CPU_IDS (x86-64's largest NR_CPUS) when the call is
 * refused.
 */
static unsigned int pcp_read_kernel_bound(void)
{
	unsigned long mask[PCP_MAX_CPU_IDS / (8 * sizeof(unsigned long))];
	long n = syscall(__NR_sched_getaffinity, 0, sizeof(mask), mask);

	if (n > 0)
		return (unsigned int)n * 8;
	if (errno == EINVAL)
		return PCP_MAX_CPU_IDS + 1;
	pr_warn("percpu: sched_getaffinity: errno %d; assuming up to %u CPUs",
		errno, PCP_MAX_CPU_IDS);
	return PCP_MAX_CPU_IDS;
}

/*
 * Length of every per-CPU array: the kernel's bound, so that no cpu_id the
 * rseq fast paths read can index past cpus[] (they carry no bounds check);
 * at least the possible CPUs sysfs shows.
 */
static unsigned int pcp_count_cpu_ids(void)
{
	unsigned int possible = pcp_read_possible();
	unsigned int bound = pcp_read_kernel_bound();

	return possible > bound ? possible : bound;
}

static inline struct rseq *pcp_rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + pcp_rseq_off);
}

static int pcp_rseq_register_own(void)
{
	long r = syscall(__NR_rseq, &pcp_own_rseq, sizeof(pcp_own_rseq), 0,
			 RSEQ_SIG);

	if (r) {
		/* this thread stays on the direct path */
		WRITE_ONCE(pcp_own_rseq.cpu_id,
			   (uint32_t)RSEQ_CPU_ID_REGISTRATION_FAILED);
		return -errno;
	}
	return 0;
}

static void pcp_rseq_unregister_own(void)
{
	if (syscall(__NR_rseq, &pcp_own_rseq, sizeof(pcp_own_rseq),
		    RSEQ_FLAG_UNREGISTER, RSEQ_SIG))
		pr_warn("percpu: cannot unregister the rseq area: errno %d "
			"(harmless: the fast paths no longer read it)", errno);
}

static long pcp_membarrier(int cmd, unsigned int flags, int cpu)
{
	return syscall(__NR_membarrier, cmd, flags, cpu);
}

static enum pcp_mode_id pcp_choose_rseq(void)
{
	long q;

	if (!IS_ENABLED(CONFIG_PERCPU_RSEQ) || USLAB_VCPU)
		return PCP_MODE_FALLBACK;
#if !defined(__x86_64__)
	return PCP_MODE_FALLBACK;
#endif
	if (RUNNING_ON_VALGRIND)
		return PCP_MODE_FALLBACK;
	if (__rseq_size >= 20 &&
	    (int)((struct rseq *)((char *)__builtin_thread_pointer() +
				  __rseq_offset))->cpu_id >= 0) {
		pcp_rseq_off = __rseq_offset;	/* glibc's registration */
	} else {
		if (pcp_rseq_register_own())
			return PCP_MODE_FALLBACK;
		pcp_own_area = true;
	}
	q = pcp_membarrier(MEMBARRIER_CMD_QUERY, 0, 0);
	if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) ||
	    pcp_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0)) {
		/*
		 * No way to fence a remote CPU: drains and resizes could not
		 * stop its fast paths. Run locked instead, and give our own
		 * area back: this thread must not run a fast path beside the
		 * locked paths of other threads on the same magazines.
		 */
		pr_info("percpu: membarrier RSEQ fence unavailable, fallback mode");
		if (pcp_own_area)
			pcp_rseq_unregister_own();
		pcp_own_area = false;
		return PCP_MODE_FALLBACK;
	}
	pcp_fence_flag_cpu = pcp_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
					    MEMBARRIER_CMD_FLAG_CPU, 0) == 0;
	return PCP_MODE_RSEQ;
}

static void pcp_init_once(void)
{
	enum pcp_mode_id mode;

	memcpy(pcp_bypass_store.pc.name, "bypass", sizeof("bypass"));

	/* until decided, fast paths read the never-registered area */
	pcp_rseq_off = (long)((char *)&pcp_idle_rseq -
			      (char *)__builtin_thread_pointer());
	if (!pcp_nr_cpus)
		pcp_nr_cpus = USLAB_VCPU ? uslab_vcpu_nr() : pcp_count_cpu_ids();
	if (!IS_ENABLED(CONFIG_PERCPU_CACHE)) {
		mode = PCP_MODE_OFF;
	} else if (USLAB_VCPU) {
		mode = PCP_MODE_VCPU;
	} else if (pcp_nr_cpus > PCP_MAX_CPU_IDS) {
		/* the bypass cache's array is this long; CPUs share slots */
		pr_info("percpu: %u CPU ids, more than %u: fallback mode",
			pcp_nr_cpus, PCP_MAX_CPU_IDS);
		pcp_nr_cpus = PCP_MAX_CPU_IDS;
		mode = PCP_MODE_FALLBACK;
	} else {
		mode = pcp_choose_rseq();
	}
	if (mode != PCP_MODE_RSEQ)
		pcp_rseq_off = (long)((char *)&pcp_idle_rseq -
				      (char *)__builtin_thread_pointer());
	else if (pcp_own_area)
		pcp_rseq_off = (long)((char *)&pcp_own_rseq -
				      (char *)__builtin_thread_pointer());
	pcp_mode_cur = mode;
}

int pcp_init(void)
{
	pthread_once(&pcp_once, pcp_init_once);
	return 0;
}

const char *pcp_mode(void)
{
	pcp_init();
	return pcp_mode_names[pcp_mode_cur];
}

enum pcp_mode_id pcp_mode_id(void)
{
	pcp_init();
	return pcp_mode_cur;
}

unsigned int pcp_nr_cpu_ids(void)
{
	pcp_init();
	return pcp_nr_cpus;
}

/**
 * pcp_current_cpu - the CPU the slow path works for.
 * Context: any thread. In rseq mode registers our own area for this thread
 * the first time (when glibc has not registered one).
 * Return: the CPU, or -1 when this thread must bypass the magazines (its
 * rseq registration failed while the process runs in rseq mode).
 */
int pcp_current_cpu(void)
{
	int cpu;

	switch (pcp_mode_cur) {
	case PCP_MODE_RSEQ:
		cpu = (int)READ_ONCE(pcp_rseq_area()->cpu_id);
		if (cpu == RSEQ_CPU_ID_UNINITIALIZED && pcp_own_area &&
		    !pcp_rseq_register_own())
			cpu = (int)READ_ONCE(pcp_rseq_area()->cpu_id);
		/* the kernel never exceeds its own bound; slow[] is as long */
		if (likely(cpu >= 0 && (unsigned int)cpu < pcp_nr_cpus))
			return cpu;
		return -1;
	case PCP_MODE_VCPU:
		return uslab_cpu_id();	/* below pcp_nr_cpus: pcp_vcpu_set_nr */
	case PCP_MODE_FALLBACK:
		cpu = uslab_cpu_id();
		if (unlikely(cpu < 0 || (unsigned int)cpu >= pcp_nr_cpus))
			cpu = 0;
		return cpu;
	default:
		return -1;
	}
}

/**
 * pcp_fence_cpu - after it returns, no rseq critical section that was
 * running (or preempted) on @cpu before the call can commit.
 * Context: rseq mode; may sleep (a system call and an IPI).
 *
 * Where MEMBARRIER_CMD_FLAG_CPU is refused (kernels before 5.10 lack it)
 * the fence covers every CPU running this process: the same guarantee,
 * more IPIs. Locked modes need no fence: the CPU lock excludes every
 * operation on the CPU.
 */
void pcp_fence_cpu(int cpu)
{
	long r;

	if (pcp_mode_cur != PCP_MODE_RSEQ)
		return;
	do {
		r = pcp_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
				   pcp_fence_flag_cpu ? MEMBARRIER_CMD_FLAG_CPU : 0,
				   cpu);
	} while (r && errno == EINTR);
	if (r)
		uslab_panic("percpu: membarrier fence for CPU %d failed: errno %d",
			    cpu, errno);
}

/**
 * pcp_vcpu_set_nr - the number of virtual CPUs (lib/cpuclock.h's), before
 * any cache has per-CPU arrays (their length).
 * Return: 0, -EINVAL (0, above PCP_MAX_CPU_IDS, or caches exist),
 * -EOPNOTSUPP outside the vcpu build.
 */
int pcp_vcpu_set_nr(unsigned int nr)
{
	int err;

	if (!USLAB_VCPU)
		return -EOPNOTSUPP;
	if (nr == 0 || nr > PCP_MAX_CPU_IDS || pcp_registry)
		return -EINVAL;
	err = uslab_vcpu_set_nr(nr);
	if (!err)
		pcp_nr_cpus = nr;
	return err;
}
