// SPDX-License-Identifier: MIT
/*
 * Loading offsum.bpf.c (see offsum.h): one tp_btf program on
 * sched_switch and two hash maps, read once at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/offsum.h"
#include "bpf/offsum-shared.h"
#include "offsum.skel.h"

_Static_assert(SFO_MAX_TASKS == SFO_MAX_TASKS_USER, "offsum.h's copy");

struct sfp_bpf_offsum {
	struct sfp_offsum_bpf *skel;
	struct sfp_bpf_offsum_stats st;
};

int sfp_bpf_offsum__load(struct sfp_bpf_offsum **out)
{
	struct sfp_bpf_offsum *b;
	int err;

	*out = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->skel = sfp_offsum_bpf__open();
	if (!b->skel) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	b->skel->bss->armed_ns = UINT64_MAX;	/* nothing counted yet */
	err = sfp_offsum_bpf__load(b->skel);
	if (!err) {
		b->skel->bss->armed_ns = UINT64_MAX;
		err = sfp_offsum_bpf__attach(b->skel);
	}
	if (err)
		goto fail;
	*out = b;
	return 0;
fail:
	pr_info("off-CPU kernel sums: cannot load or attach the BPF program "
		"on sched_switch: %s", strerror(-err));
	sfp_bpf_offsum__free(&b);
	return err;
}

void sfp_bpf_offsum__arm(struct sfp_bpf_offsum *b, uint64_t now_ns)
{
	if (b)
		b->skel->bss->armed_ns = now_ns;
}

void sfp_bpf_offsum__stop(struct sfp_bpf_offsum *b)
{
	int ncpu, fd;
	uint32_t i;
	uint64_t *v;

	if (!b || !b->skel->links.on_switch)
		return;
	bpf_link__destroy(b->skel->links.on_switch);
	b->skel->links.on_switch = NULL;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return;
	fd = bpf_map__fd(b->skel->maps.counters);
	for (i = 0; i < SFO_NR_COUNTERS; i++) {
		uint64_t sum = 0;
		int c;

		if (bpf_map_lookup_elem(fd, &i, v))
			continue;
		for (c = 0; c < ncpu; c++)
			sum += v[c];
		switch (i) {
		case SFO_CTR_BLOCKS: b->st.blocks = sum; break;
		case SFO_CTR_WOKEN: b->st.woken = sum; break;
		case SFO_CTR_OUT_FULL: b->st.out_full = sum; break;
		case SFO_CTR_SUMS_FULL: b->st.sums_full = sum; break;
		}
	}
	free(v);
}

int sfp_bpf_offsum__read(struct sfp_bpf_offsum *b, sfp_bpf_offsum_fn fn,
			 void *ctx)
{
	int fd, err;
	uint32_t key, next;
	struct sfo_sum s;
	bool first = true;

	if (!b)
		return 0;
	fd = bpf_map__fd(b->skel->maps.sums);
	b->st.tasks = 0;
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &s))
			continue;
		b->st.tasks++;
		err = fn(ctx, s.pid, key, s.ns, s.blocks);
		if (err)
			return err;
	}
	return 0;
}

void sfp_bpf_offsum__stats(const struct sfp_bpf_offsum *b,
			   struct sfp_bpf_offsum_stats *st)
{
	if (b)
		*st = b->st;
	else
		memset(st, 0, sizeof(*st));
}

void sfp_bpf_offsum__free(struct sfp_bpf_offsum **bp)
{
	struct sfp_bpf_offsum *b = *bp;

	if (!b)
		return;
	sfp_offsum_bpf__destroy(b->skel);
	free(b);
	*bp = NULL;
}
