// SPDX-License-Identifier: MIT
/*
 * percpu_no_rseq CMD [ARGS...]: run CMD with the rseq system call failing
 * with ENOSYS (a seccomp filter, as container runtimes with old profiles
 * do). glibc then cannot register its rseq area and neither can uslab, so
 * CMD runs in the per-CPU layer's fallback mode.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rseq, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
		.filter = filter,
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s CMD [ARGS...]\n", argv[0]);
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)) {
		fprintf(stderr, "percpu_no_rseq: seccomp: %s\n", strerror(errno));
		return 2;
	}
	/* the filter is in force: this must fail now */
	if (syscall(__NR_rseq, NULL, 0, 0, 0) != -1 || errno != ENOSYS) {
		fprintf(stderr, "percpu_no_rseq: rseq still reachable\n");
		return 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "percpu_no_rseq: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
