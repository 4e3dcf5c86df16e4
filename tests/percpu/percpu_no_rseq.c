// SPDX-License-Identifier: MIT
/*
 * percpu_no_rseq [--membarrier[=ERRNO]] CMD [ARGS...]: run CMD under a
 * seccomp filter, as container runtimes with old profiles do.
 *
 *   (default)       rseq fails with ENOSYS: glibc cannot register its rseq
 *                   area and neither can uslab, so CMD runs in the per-CPU
 *                   layer's fallback mode.
 *   --membarrier    membarrier fails with EPERM (or ERRNO: "ENOSYS"),
 *                   rseq works: with GLIBC_TUNABLES=glibc.pthread.rseq=0
 *                   uslab registers its own rseq area, then finds no fence
 *                   and must run in fallback mode without that area.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned int nr = __NR_rseq, err = ENOSYS;
	int arg = 1;

	if (argc > 1 && !strncmp(argv[1], "--membarrier", 12)) {
		nr = __NR_membarrier;
		err = strcmp(argv[1], "--membarrier=ENOSYS") ? EPERM : ENOSYS;
		arg++;
	}

	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
		.filter = filter,
	};

	if (argc <= arg) {
		fprintf(stderr, "usage: %s [--membarrier[=ENOSYS]] CMD [ARGS...]\n",
			argv[0]);
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)) {
		fprintf(stderr, "percpu_no_rseq: seccomp: %s\n", strerror(errno));
		return 2;
	}
	/* the filter is in force: this must fail now */
	if (nr == __NR_rseq ?
	    syscall(__NR_rseq, NULL, 0, 0, 0) != -1 || errno != ENOSYS :
	    syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) != -1 ||
	    errno != (int)err) {
		fprintf(stderr, "percpu_no_rseq: system call still reachable\n");
		return 2;
	}
	execvp(argv[arg], argv + arg);
	fprintf(stderr, "percpu_no_rseq: %s: %s\n", argv[arg], strerror(errno));
	return 127;
}
