/* SPDX-License-Identifier: MIT */
/*
 * sim/ private declarations: what sim/'s own files share beyond sim/sim.h
 * (the simulator's view of the slab and percpu layers). Included by sim/
 * only (and the white-box tests and fuzzers; docs/layout.md).
 */
#ifndef USLAB_SIM_INTERNAL_H
#define USLAB_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/sim.h"

/* sim/simulate_layers.c: the simulator's view of the slab and percpu layers. */
/* Before anything allocates: @cpus virtual CPUs. Return: 0 or -errno. */
int sim_layers_init(unsigned int cpus, bool no_reaper);
/* Before the caches exist: @cfg's tunables as slab/ settings. */
int sim_layers_settings(const struct sim_config *cfg, struct sim_result *res);
/* Whether @n is a kmalloc class (a size it serves or a cache name). */
bool sim_class_named(const char *n);
/* After: fails (-ENOENT, said) when a per-class name matched no cache. */
int sim_layers_apply(const struct sim_config *cfg, struct sim_result *res);
void sim_layers_set_cpu(unsigned int cpu, uint64_t time_ns);
/* Adaptive magazines: each class's largest size in force into @mag
 * (SIM_MAX_CLASSES entries). Return: false when magazines are fixed. */
bool sim_layers_mag_sizes(struct sim_result *res, uint16_t *mag);
void sim_layers_collect(struct sim_result *res);
void sim_layers_mark_start(struct sim_result *res);
int sim_layers_hold(const struct sim_config *cfg, struct sim_result *res);
/* Bytes of slabs per class (slabinfo's num_slabs * pagesperslab). */
void sim_slab_bytes(struct sim_result *res, uint64_t *bytes);

#endif /* USLAB_SIM_INTERNAL_H */
