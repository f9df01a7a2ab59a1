// SPDX-License-Identifier: MIT
/*
 * The "flamegraph" export: one self-contained, interactive HTML file.
 *
 * The profile's prefix tree of locations becomes a call tree of functions
 * (inlined functions as frames of their own, outermost first), siblings
 * merged by function and sorted by name as flame graphs do.  The page
 * carries the per-function names, DSOs and kinds as JSON and the tree in
 * depth-first pre-order packed into text (flame-tree.h: about 15 bits a
 * frame, so a million-frame tree is 2.5 MB, not the 9 MB of JSON arrays),
 * which the viewer (src/export/flamegraph/viewer.js, compiled in by
 * mk/embed.sh) unpacks in one linear pass.  The page loads nothing: CSS,
 * script and data are inline.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/htab.h"
#include "export-int.h"
#include "flame-json.h"
#include "flame-tree.h"
#include "flamegraph-assets.h"	/* generated: sfp_asset_* */

/* A frame of the merged call tree.  Children are a singly linked list. */
struct fg_node {
	uint32_t parent;
	uint32_t func;		/* profile func index; UINT32_MAX at the root */
	uint32_t first_child, next_sibling;
	uint64_t value;		/* samples; in the time view on+off ns */
	uint64_t off;		/* time view: the off-CPU ns of value */
};

struct fg {
	const struct sfp_profile *p;
	struct fg_node *nodes;
	size_t nr, cap;
	/* (parent, func) -> node, open addressing; 0 is empty (the root is
	 * never anyone's child) */
	struct sfp_htab idx;	/* nodes by (parent, func) */
	uint32_t *fmap;		/* profile func -> output func, UINT32_MAX unused */
	uint32_t nr_out_funcs;
	/*
	 * The time view, taken when the file has off-CPU samples: widths are
	 * nanoseconds, off-CPU blocks weighed by their blocked time, on-CPU
	 * samples of one event by their period (or 1e9 / frequency).
	 */
	bool timed;
	uint32_t on_event, off_event;	/* NONE: none */
	uint64_t on_ns_per_sample;	/* 0: the sample's own period */
	size_t nr_on, nr_off;		/* samples of each */
	const char *view;		/* the initial view: on, off, both */
	/* the output: frames in pre-order, functions in order of use */
	uint32_t *order, *depth, *ofunc, *used;
	size_t nr_order, nr_used;
	uint32_t max_depth;
	uint64_t preview_min;		/* 0: no preview */
	size_t nr_preview;
	/* the functions' canonical code: per output function, and how many
	 * codes of each length (flame-tree.h) */
	uint32_t *code;
	uint8_t *code_len;
	uint32_t code_count[SFP_FLAME_CODE_MAX + 1];
	unsigned int code_max;
};

#define NONE UINT32_MAX

struct node_key {
	uint32_t parent, func;
};

static bool node_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct fg_node *n = &((const struct fg *)ctx)->nodes[idx];
	const struct node_key *k = key;

	return n->parent == k->parent && n->func == k->func;
}

/* The child of @parent for @func, made if missing.  Return its index. */
static int64_t child(struct fg *g, uint32_t parent, uint32_t func)
{
	struct node_key k = { parent, func };
	/* both halves of the key must reach the low bits the index keeps */
	uint32_t h = sfp_hash64((uint64_t)parent << 32 | func, 0);
	uint32_t i = sfp_htab_find(&g->idx, h, node_eq, g, &k);
	struct fg_node *n;

	if (i != SFP_HTAB_NONE)
		return i;
	if (g->nr == g->cap) {
		size_t ncap = g->cap * 2;
		struct fg_node *nn;

		if (ncap >= NONE)
			return -E2BIG;
		nn = realloc(g->nodes, ncap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		g->nodes = nn;
		g->cap = ncap;
	}
	n = &g->nodes[g->nr];
	n->parent = parent;
	n->func = func;
	n->first_child = NONE;
	n->next_sibling = g->nodes[parent].first_child;
	n->value = 0;
	n->off = 0;
	if (sfp_htab_add(&g->idx, h, (uint32_t)g->nr))
		return -ENOMEM;
	g->nodes[parent].first_child = (uint32_t)g->nr;
	return (int64_t)g->nr++;
}

static bool loc_is_kernel(const struct sfp_profile *p,
			  const struct sfp_profile_loc *l)
{
	const struct sfp_profile_mapping *m;

	if (l->mapping != NONE) {
		m = sfp_profile__mapping(p, l->mapping);
		if (m)
			return m->kind == SFP_PROFILE_KERNEL;
	}
	if (l->nr_lines) {
		const struct sfp_profile_func *f =
			sfp_profile__func(p, l->lines[0].func);

		return f && f->kind == SFP_PROFILE_KERNEL;
	}
	return false;
}

/*
 * Whether the time view applies and which events it shows: the off-CPU
 * event (offcpu-time, record --off-cpu's and perf's) and as on-CPU time
 * the first event that converts to time -- a clock event (its period is
 * ns) or else one sampled at a frequency (a sample stands for 1 / freq s
 * of CPU time, perf's -F keeps it so).  Any other event is left out:
 * counts of page faults and nanoseconds do not add up.
 */
static void pick_time_view(struct fg *g)
{
	const struct sfp_profile *p = g->p;
	size_t ne = sfp_profile__nr_events(p), ns = sfp_profile__nr_samples(p);
	size_t e, i, *cnt = calloc(ne + 1, sizeof(*cnt));
	uint32_t freq_event = NONE;

	g->on_event = g->off_event = NONE;
	if (!cnt)
		return;
	for (i = 0; i < ns; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);

		/* (a merged sample stands for count samples) */
		cnt[s->event < ne ? s->event : ne] += s->count;
	}
	for (e = 0; e < ne; e++) {
		const struct sfp_profile_event *ev = sfp_profile__event(p, e);
		if (!cnt[e])
			continue;
		if (ev && ev->kind == SFP_PROFILE_EV_OFF_CPU) {
			if (g->off_event == NONE)
				g->off_event = (uint32_t)e;
		} else if (ev && ev->kind == SFP_PROFILE_EV_CLOCK) {
			if (g->on_event == NONE)
				g->on_event = (uint32_t)e;
		} else if (ev && ev->sample_freq && freq_event == NONE) {
			freq_event = (uint32_t)e;
		}
	}
	if (g->off_event != NONE) {
		g->timed = true;
		if (g->on_event == NONE && freq_event != NONE) {
			g->on_event = freq_event;
			g->on_ns_per_sample = 1000000000ull /
				sfp_profile__event(p, freq_event)->sample_freq;
			if (!g->on_ns_per_sample)
				g->on_ns_per_sample = 1;
		}
		g->nr_off = cnt[g->off_event];
		g->nr_on = g->on_event != NONE ? cnt[g->on_event] : 0;
	}
	free(cnt);
}

/* A sample's weight in the time view (0: left out), and its side. */
static uint64_t time_weight(const struct fg *g,
			    const struct sfp_profile_sample *s, bool *off)
{
	*off = s->event == g->off_event;
	if (*off)
		return s->period;
	if (s->event != g->on_event)
		return 0;
	/* (a merged sample: count samples, period their sum) */
	return g->on_ns_per_sample ? g->on_ns_per_sample * s->count : s->period;
}

/*
 * Merge the profile's stacks into the call tree: every profile node maps
 * to the frame of its innermost line, reached from its parent's frame
 * through the loc's lines, outermost first.  Counts are samples.  A file
 * with several events gets one subtree per event below the root (func
 * index nr_funcs + event), since adding up cycles and page faults means
 * nothing -- except in the time view (pick_time_view()), where on-CPU and
 * off-CPU nanoseconds share one tree, each frame knowing its off part.
 */
static int build(struct fg *g, bool user_only)
{
	const struct sfp_profile *p = g->p;
	size_t nn = sfp_profile__nr_nodes(p), ns = sfp_profile__nr_samples(p);
	size_t nf = sfp_profile__nr_funcs(p), i, maxd = 0, e;
	size_t ne = sfp_profile__nr_events(p);
	bool split = ne > 1;
	uint32_t *map = NULL, *order = NULL;
	size_t *cnt = NULL;
	uint64_t *self = NULL, *sub = NULL, *self_off = NULL;
	int err = -ENOMEM;

	if (g->timed)
		split = false;

	g->cap = 1024;
	g->nodes = malloc(g->cap * sizeof(*g->nodes));
	g->fmap = malloc((nf + ne + 1) * sizeof(*g->fmap));
	map = malloc((nn ? nn : 1) * sizeof(*map));
	order = malloc((nn ? nn : 1) * sizeof(*order));
	self = calloc(nn ? nn : 1, sizeof(*self));
	sub = calloc(nn ? nn : 1, sizeof(*sub));
	self_off = calloc(nn ? nn : 1, sizeof(*self_off));
	if (!g->nodes || !g->fmap || !map || !order || !self || !sub ||
	    !self_off)
		goto out;
	memset(g->fmap, 0xff, (nf + ne + 1) * sizeof(*g->fmap));
	g->nodes[0] = (struct fg_node){ .parent = NONE, .func = NONE,
					.first_child = NONE,
					.next_sibling = NONE,
					.value = 0, .off = 0 };
	g->nr = 1;

	/* parents before children: order the profile's nodes by depth */
	for (i = 0; i < nn; i++) {
		const struct sfp_profile_node *n = sfp_profile__node(p, (uint32_t)i);

		if (n->depth > maxd)
			maxd = n->depth;
	}
	cnt = calloc(maxd + 2, sizeof(*cnt));
	if (!cnt)
		goto out;
	for (i = 0; i < nn; i++)
		cnt[sfp_profile__node(p, (uint32_t)i)->depth + 1]++;
	for (i = 1; i <= maxd + 1; i++)
		cnt[i] += cnt[i - 1];
	for (i = 0; i < nn; i++)
		order[cnt[sfp_profile__node(p, (uint32_t)i)->depth]++] = (uint32_t)i;

	for (e = 0; e < (split ? ne : 1); e++) {
		uint32_t root = 0;

		/* this event's samples per node, then per subtree (children
		 * come after their parents in order[]) */
		memset(self, 0, nn * sizeof(*self));
		memset(sub, 0, nn * sizeof(*sub));
		for (i = 0; i < ns; i++) {
			const struct sfp_profile_sample *s = sfp_profile__sample(p, i);
			size_t at = s->stack < nn ? s->stack : 0;
			bool off;
			uint64_t w;

			if (!g->timed) {
				if (!split || s->event == e)
					self[at] += s->count;
				continue;
			}
			w = time_weight(g, s, &off);
			self[at] += w;
			if (off)
				self_off[at] += w;
		}
		for (i = nn; i-- > 0;) {
			const struct sfp_profile_node *n = sfp_profile__node(p, order[i]);

			sub[order[i]] += self[order[i]];
			if (n->parent != NONE && n->parent < nn)
				sub[n->parent] += sub[order[i]];
		}
		if (!nn || !sub[0])
			continue;
		if (split) {
			/* several events: one subtree per event below the root */
			int64_t c = child(g, 0, (uint32_t)(nf + e));

			if (c < 0) {
				err = (int)c;
				goto out;
			}
			root = (uint32_t)c;
		}
		for (i = 0; i < nn; i++) {
			uint32_t id = order[i], cur, l;
			const struct sfp_profile_node *n = sfp_profile__node(p, id);
			const struct sfp_profile_loc *loc;

			map[id] = root;
			if (n->parent == NONE || n->loc == NONE || !sub[id])
				continue;
			if (n->parent >= nn) {
				err = -EBADMSG;
				goto out;
			}
			cur = map[n->parent];
			loc = sfp_profile__loc(p, n->loc);
			if (!loc || (user_only && loc_is_kernel(p, loc))) {
				map[id] = cur;
				continue;
			}
			for (l = loc->nr_lines; l-- > 0;) {
				int64_t c = child(g, cur, loc->lines[l].func);

				if (c < 0) {
					err = (int)c;
					goto out;
				}
				cur = (uint32_t)c;
			}
			map[id] = cur;
		}
		for (i = 0; i < nn; i++) {
			g->nodes[map[i]].value += self[i];
			g->nodes[map[i]].off += self_off[i];
		}
	}
	/* children were made after their parents: sum up in reverse */
	for (i = g->nr; i-- > 1;) {
		g->nodes[g->nodes[i].parent].value += g->nodes[i].value;
		g->nodes[g->nodes[i].parent].off += g->nodes[i].off;
	}
	err = 0;
out:
	free(self_off);
	free(map);
	free(order);
	free(cnt);
	free(self);
	free(sub);
	return err;
}

static const char *func_name(const struct sfp_profile *p, uint32_t f)
{
	size_t nf = sfp_profile__nr_funcs(p);
	const struct sfp_profile_func *fn;

	if (f >= nf) {	/* an event's subtree */
		const struct sfp_profile_event *e = sfp_profile__event(p, f - nf);

		return e && e->name ? e->name : "[event]";
	}
	fn = sfp_profile__func(p, f);

	return fn && fn->name ? fn->name : "[unknown]";
}

static int cmp_children(const void *a, const void *b, void *arg)
{
	const struct sfp_profile *p = arg;
	const struct fg_node *x = *(const struct fg_node *const *)a;
	const struct fg_node *y = *(const struct fg_node *const *)b;
	int c = strcmp(func_name(p, x->func), func_name(p, y->func));

	if (c)
		return c;
	return x->func < y->func ? -1 : x->func > y->func;
}

/*
 * The output order: depth-first pre-order, siblings by name, frames
 * without samples left out.  Fills @order (node ids) and @depth.
 */
static int preorder(struct fg *g, uint32_t *order, uint32_t *depth,
		    size_t *nr_out)
{
	/* the stack holds nodes still to visit, pushed in reverse name order */
	uint32_t *stack = malloc(g->nr * sizeof(*stack));
	uint32_t *sdepth = malloc(g->nr * sizeof(*sdepth));
	struct fg_node **kids = malloc(g->nr * sizeof(*kids));
	size_t sp = 0, n = 0;

	if (!stack || !sdepth || !kids) {
		free(stack);
		free(sdepth);
		free(kids);
		return -ENOMEM;
	}
	stack[sp] = 0;
	sdepth[sp++] = 0;
	while (sp) {
		uint32_t id = stack[--sp], d = sdepth[sp], c;
		size_t nk = 0;

		order[n] = id;
		depth[n++] = d;
		for (c = g->nodes[id].first_child; c != NONE;
		     c = g->nodes[c].next_sibling)
			if (g->nodes[c].value)
				kids[nk++] = &g->nodes[c];
		if (nk > 1)
			qsort_r(kids, nk, sizeof(*kids), cmp_children,
				(void *)g->p);
		while (nk--) {
			stack[sp] = (uint32_t)(kids[nk] - g->nodes);
			sdepth[sp++] = d + 1;
		}
	}
	*nr_out = n;
	free(stack);
	free(sdepth);
	free(kids);
	return 0;
}

static void write_u32_array(FILE *out, const char *key, const uint32_t *v,
			    size_t n)
{
	size_t i;

	fprintf(out, ",\n\"%s\":[", key);
	for (i = 0; i < n; i++)
		fprintf(out, i ? ",%" PRIu32 : "%" PRIu32, v[i]);
	putc(']', out);
}

static const uint8_t *sort_len;

static int cmp_code_order(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_len[x] != sort_len[y])
		return sort_len[x] < sort_len[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The functions' code: Huffman lengths from how many frames use each,
 * then the functions renumbered in the canonical order (shorter codes
 * first, ties in order of first use) so that function r gets the r-th
 * code and the page needs only the count of codes of each length.
 */
static int make_code(struct fg *g)
{
	size_t nu = g->nr_used, i, r;
	uint64_t *freq = calloc(nu ? nu : 1, sizeof(*freq));
	uint8_t *len = malloc(nu ? nu : 1);
	uint32_t *perm = malloc((nu ? nu : 1) * sizeof(*perm));
	uint32_t *rank = malloc((nu ? nu : 1) * sizeof(*rank));
	uint32_t *used = malloc((nu ? nu : 1) * sizeof(*used));
	uint32_t code = 0;
	unsigned int l;
	int err = -ENOMEM;

	g->code = malloc((nu ? nu : 1) * sizeof(*g->code));
	g->code_len = malloc(nu ? nu : 1);
	if (!freq || !len || !perm || !rank || !used || !g->code || !g->code_len)
		goto out;
	for (i = 1; i < g->nr_order; i++)
		freq[g->ofunc[i]]++;
	err = sfp_flame_code_lengths(freq, nu, len);
	if (err)
		goto out;
	for (i = 0; i < nu; i++)
		perm[i] = (uint32_t)i;
	sort_len = len;
	qsort(perm, nu, sizeof(*perm), cmp_code_order);
	sort_len = NULL;
	for (r = 0; r < nu; r++) {
		rank[perm[r]] = (uint32_t)r;
		used[r] = g->used[perm[r]];
		g->code_len[r] = len[perm[r]];
		g->code_count[len[perm[r]]]++;
		if (len[perm[r]] > g->code_max)
			g->code_max = len[perm[r]];
	}
	memcpy(g->used, used, nu * sizeof(*used));
	for (i = 1; i < g->nr_order; i++)
		g->ofunc[i] = rank[g->ofunc[i]];
	/* canonical codes: consecutive within a length, then one bit longer */
	for (l = 1, r = 0; l <= g->code_max; l++) {
		for (i = 0; i < g->code_count[l]; i++)
			g->code[r++] = code++;
		code <<= 1;
	}
	err = 0;
out:
	free(freq);
	free(len);
	free(perm);
	free(rank);
	free(used);
	return err;
}

/*
 * The frames in output order and the functions they use, numbered in
 * order of first use (then in the order of their codes, make_code()).
 */
static int prepare_output(struct fg *g)
{
	const struct sfp_profile *p = g->p;
	size_t i, nf = sfp_profile__nr_funcs(p), n;
	int err;

	g->order = malloc(g->nr * sizeof(*g->order));
	g->depth = malloc(g->nr * sizeof(*g->depth));
	g->ofunc = malloc(g->nr * sizeof(*g->ofunc));
	g->used = malloc((nf + sfp_profile__nr_events(p) + 1) *
			 sizeof(*g->used));
	if (!g->order || !g->depth || !g->ofunc || !g->used)
		return -ENOMEM;
	err = preorder(g, g->order, g->depth, &g->nr_order);
	if (err)
		return err;
	n = g->nr_order;
	for (i = 0; i < n; i++) {
		uint32_t f = g->nodes[g->order[i]].func;

		if (g->depth[i] > g->max_depth)
			g->max_depth = g->depth[i];
		if (f == NONE) {
			g->ofunc[i] = NONE;
			continue;
		}
		if (g->fmap[f] == NONE) {
			g->fmap[f] = (uint32_t)g->nr_used;
			g->used[g->nr_used++] = f;
		}
		g->ofunc[i] = g->fmap[f];
	}
	return make_code(g);
}

/* A frame's width in the view the page opens with. */
static uint64_t view_value(const struct fg *g, const struct fg_node *n)
{
	if (!g->timed || !strcmp(g->view, "both"))
		return n->value;
	if (!strcmp(g->view, "off"))
		return n->off;
	return n->value - n->off;
}

/*
 * The preview: the frames the first draw can show.  At the page's full
 * view a frame is drawn when at least half a pixel wide, so on a canvas
 * up to PREVIEW_PX wide only frames of at least total / (2 * PREVIEW_PX)
 * can appear, and those are an ancestor-closed top of the tree -- a few
 * thousand frames of a million.  The viewer draws them before the page's
 * big tree is even parsed (it comes after the script), then reads the
 * whole tree.  Small trees get no preview: reading them is quick anyway.
 */
#define PREVIEW_PX 8192
#define PREVIEW_MIN_FRAMES 20000

static uint64_t preview_min(const struct fg *g, size_t *nr)
{
	uint64_t t;
	size_t i, k = 0;

	*nr = 0;
	if (g->nr_order < PREVIEW_MIN_FRAMES)
		return 0;
	t = view_value(g, &g->nodes[g->order[0]]) / (2 * PREVIEW_PX);
	if (!view_value(g, &g->nodes[g->order[0]]))
		return 0;
	if (!t)
		t = 1;
	for (i = 0; i < g->nr_order; i++)
		k += view_value(g, &g->nodes[g->order[i]]) >= t;
	/* worth it only when it is a small part of the tree */
	if (k > g->nr_order / 8)
		return 0;
	*nr = k;
	return t;
}

/*
 * The packed tree (flame-tree.h): the root's samples, then per frame its
 * function, the levels the next frame climbs, its samples and, in the
 * time view, its off-CPU part.  With @min, only the frames of at least
 * @min in the first view, each followed by delta(gap + 1), gap being what
 * its left-out siblings before it weigh in that view (so that the preview
 * places its frames where the whole tree does).
 */
static int write_tree(const struct fg *g, FILE *out, uint64_t min)
{
	struct sfp_flame_bits b;
	size_t i, n = g->nr_order, k, np = 0;
	uint32_t *idx = NULL, *pdepth = NULL;
	uint64_t *gap = NULL, *acc = NULL;
	bool *in = NULL;
	int err = -ENOMEM;

	if (!n)
		return 0;
	idx = malloc(n * sizeof(*idx));
	pdepth = malloc(n * sizeof(*pdepth));
	gap = calloc(n, sizeof(*gap));
	acc = calloc(g->max_depth + 2, sizeof(*acc));
	in = calloc(g->max_depth + 2, sizeof(*in));
	if (!idx || !pdepth || !gap || !acc || !in)
		goto out;
	/* the frames to write, with their depth and (preview) gap */
	for (i = 0; i < n; i++) {
		uint32_t d = g->depth[i];
		uint64_t v = view_value(g, &g->nodes[g->order[i]]);

		if (min && i && !in[d - 1]) {
			in[d] = false;	/* below a left-out frame */
			continue;
		}
		in[d] = !min || !i || v >= min;
		if (!in[d]) {
			acc[d] += v;
			continue;
		}
		gap[np] = acc[d];
		acc[d] = 0;
		acc[d + 1] = 0;
		pdepth[np] = d;
		idx[np++] = (uint32_t)i;
	}
	sfp_flame_bits_init(&b, out);
	sfp_flame_tree_put_root(&b, g->nodes[g->order[0]].value, g->timed,
				g->nodes[g->order[0]].off);
	for (k = 1; k < np; k++) {
		const struct fg_node *f = &g->nodes[g->order[idx[k]]];
		/* the frame after the last would be at depth 1 */
		uint32_t next = k + 1 < np ? pdepth[k + 1] : 1;
		uint32_t fn = g->ofunc[idx[k]];

		sfp_flame_tree_put(&b, g->code[fn], g->code_len[fn],
				   (uint64_t)pdepth[k] + 1 - next, f->value,
				   g->timed, f->off);
		if (min)
			sfp_flame_bits_delta(&b, gap[k] + 1);
	}
	sfp_flame_bits_end(&b);
	err = 0;
out:
	free(idx);
	free(pdepth);
	free(gap);
	free(acc);
	free(in);
	return err;
}

static const char *event_name(const struct sfp_profile *p, uint32_t e)
{
	const struct sfp_profile_event *ev = sfp_profile__event(p, e);

	return ev && ev->name ? ev->name : "?";
}

/* Samples taken: a merged sample (sfp_profile_opts.merge_samples) is
 * count of them. */
static size_t samples_taken(const struct sfp_profile *p)
{
	size_t i, n = 0, ns = sfp_profile__nr_samples(p);

	for (i = 0; i < ns; i++)
		n += sfp_profile__sample(p, i)->count;
	return n;
}

/* The line below the title: host, events, sample counts. */
static void write_sub_text(FILE *m, const struct fg *g, size_t total)
{
	const struct sfp_profile *p = g->p;
	const char *host = sfp_profile__hostname(p);
	size_t i, ne = sfp_profile__nr_events(p);

	if (host)
		fprintf(m, "%s \u00b7 ", host);
	if (g->timed) {
		if (g->on_event != NONE)
			fprintf(m, "on-CPU: %s, %zu samples \u00b7 ",
				event_name(p, g->on_event), g->nr_on);
		fprintf(m, "off-CPU: %s, %zu blocks \u00b7 sfprof",
			event_name(p, g->off_event), g->nr_off);
		return;
	}
	for (i = 0; i < ne; i++)
		fprintf(m, "%s%s", i ? ", " : "", event_name(p, (uint32_t)i));
	fprintf(m, "%s%zu samples \u00b7 sfprof", ne ? " \u00b7 " : "", total);
}

/*
 * The time view's statement of its unit (the page shows it beside the
 * switch): what a width is made of, and which events were left out.
 */
static void write_unit_note(FILE *m, const struct fg *g)
{
	const struct sfp_profile *p = g->p;
	size_t e, ne = sfp_profile__nr_events(p), left = 0;

	fputs("Widths are time: off-CPU = blocked ns", m);
	if (g->on_event == NONE)
		fputs("; no on-CPU samples convert to time", m);
	else if (g->on_ns_per_sample)
		fprintf(m, "; on-CPU = %s samples \u00d7 %" PRIu64
			" ns (1 / its sampling frequency)",
			event_name(p, g->on_event), g->on_ns_per_sample);
	else
		fprintf(m, "; on-CPU = %s samples \u00d7 their period (ns)",
			event_name(p, g->on_event));
	for (e = 0; e < ne; e++) {
		if (e == g->on_event || e == g->off_event)
			continue;
		fprintf(m, "%s%s", left++ ? ", " : ". Left out (not time): ",
			event_name(p, (uint32_t)e));
	}
	putc('.', m);
}

/* @fn's text as one JSON string, assembled in a memory stream so that it
 * is escaped once. */
static void write_json_text(FILE *out, const struct fg *g, size_t total,
			    void (*fn)(FILE *, const struct fg *, size_t))
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);

	if (!m) {
		sfp_flame_json_str(out, "");
		return;
	}
	fn(m, g, total);
	fclose(m);
	sfp_flame_json_str(out, s);
	free(s);
}

static void unit_note_fn(FILE *m, const struct fg *g, size_t total)
{
	(void)total;
	write_unit_note(m, g);
}

static int write_data(struct fg *g, FILE *out, const char *title)
{
	const struct sfp_profile *p = g->p;
	size_t i, nf = sfp_profile__nr_funcs(p), nu = g->nr_used;
	const uint32_t *used = g->used;
	const char **seen;
	uint32_t *fd;
	size_t nd = 0, j;

	fputs("{\"v\":2,\n\"title\":", out);
	sfp_flame_json_str(out, title);
	fputs(",\n\"sub\":", out);
	write_json_text(out, g, samples_taken(p), write_sub_text);
	if (g->timed) {
		/* values are ns, each frame with its off-CPU part */
		fputs(",\n\"unit\":\"ns\",\n\"offcpu\":true,\n\"view\":", out);
		sfp_flame_json_str(out, g->view);
		fputs(",\n\"unitNote\":", out);
		write_json_text(out, g, 0, unit_note_fn);
	} else {
		fputs(",\n\"unit\":\"samples\"", out);
	}
	/* what the viewer needs to read the tree (sfp-tree) */
	fprintf(out, ",\n\"nodes\":%zu,\n\"maxDepth\":%" PRIu32 ",\n\"funcCode\":[",
		g->nr_order, g->max_depth);
	/* how many functions have codes of 1, 2, ... bits */
	for (i = 1; i <= g->code_max; i++)
		fprintf(out, i > 1 ? ",%" PRIu32 : "%" PRIu32, g->code_count[i]);
	putc(']', out);
	/* sfp-preview: the frames of at least previewMin */
	fprintf(out, ",\n\"previewNodes\":%zu,\n\"previewMin\":%" PRIu64,
		g->nr_preview, g->preview_min);
	fputs(",\n\"names\":[", out);
	for (i = 0; i < nu; i++) {
		if (i)
			putc(',', out);
		sfp_flame_json_str(out, func_name(p, used[i]));
	}
	/* DSO names: interned by pointer (the profile's strings are) */
	fputs("],\n\"dsos\":[", out);
	seen = malloc((nu ? nu : 1) * sizeof(*seen));
	fd = malloc((nu ? nu : 1) * sizeof(*fd));
	if (!seen || !fd) {
		free(seen);
		free(fd);
		return -ENOMEM;
	}
	for (i = 0; i < nu; i++) {
		const struct sfp_profile_func *f =
			used[i] < nf ? sfp_profile__func(p, used[i]) : NULL;
		const char *d = f && f->dso ? f->dso : "";

		for (j = 0; j < nd; j++)
			if (seen[j] == d || !strcmp(seen[j], d))
				break;
		if (j == nd) {
			if (nd)
				putc(',', out);
			sfp_flame_json_str(out, d);
			seen[nd++] = d;
		}
		fd[i] = (uint32_t)j;
	}
	putc(']', out);
	write_u32_array(out, "fdso", fd, nu);
	/* 0 user, 1 kernel, 2 an event's subtree */
	for (i = 0; i < nu; i++) {
		const struct sfp_profile_func *f =
			used[i] < nf ? sfp_profile__func(p, used[i]) : NULL;

		fd[i] = used[i] >= nf ? 2 : f && f->kind == SFP_PROFILE_KERNEL;
	}
	write_u32_array(out, "fkind", fd, nu);
	putc('}', out);
	free(seen);
	free(fd);
	return 0;
}

/* The template with its @@SFP_<NAME>@@ markers filled in. */
static int write_page(struct fg *g, FILE *out, const char *title)
{
	const char *t = sfp_asset_template_html, *m;
	int err;

	while ((m = strstr(t, "@@SFP_"))) {
		const char *name = m + 6, *e = strstr(name, "@@");

		if (!e)
			break;
		fwrite(t, 1, (size_t)(m - t), out);
		if (!strncmp(name, "TITLE@@", 7)) {
			sfp_flame_html_text(out, title);
		} else if (!strncmp(name, "CSS@@", 5)) {
			fputs(sfp_asset_viewer_css, out);
		} else if (!strncmp(name, "JS@@", 4)) {
			fputs(sfp_asset_viewer_js, out);
		} else if (!strncmp(name, "DATA@@", 6)) {
			err = write_data(g, out, title);
			if (err)
				return err;
		} else if (!strncmp(name, "TREE@@", 6)) {
			err = write_tree(g, out, 0);
			if (err)
				return err;
		} else if (!strncmp(name, "PREVIEW@@", 9)) {
			err = g->preview_min ?
				write_tree(g, out, g->preview_min) : 0;
			if (err)
				return err;
		} else {
			pr_warn("flamegraph: unknown template marker '%.*s'",
				(int)(e - name), name);
			return -EINVAL;
		}
		t = e + 2;
	}
	fputs(t, out);
	return ferror(out) ? -EIO : 0;
}

int sfp_export_flamegraph(const struct sfp_profile *p, FILE *out,
			  const struct sfp_export_opts *opts)
{
	const char *title = SFP_OPTS_GET(opts, sfp_export_opts, title, NULL);
	bool user_only = SFP_OPTS_GET(opts, sfp_export_opts, user_only, false);
	const char *view = SFP_OPTS_GET(opts, sfp_export_opts, view, NULL);
	struct fg g = { .p = p };
	int err;

	if (!view || !*view)
		view = "both";
	if (strcmp(view, "on") && strcmp(view, "off") && strcmp(view, "both")) {
		pr_warn("flamegraph: unknown view '%s' (on, off or both)", view);
		return -EINVAL;
	}
	g.view = view;
	pick_time_view(&g);

	if (!title || !*title)
		title = sfp_profile__cmdline(p);
	if (!title || !*title)
		title = "sfprof flame graph";
	err = build(&g, user_only);
	if (!err)
		err = prepare_output(&g);
	if (!err)
		g.preview_min = preview_min(&g, &g.nr_preview);
	if (!err)
		err = write_page(&g, out, title);
	free(g.code);
	free(g.code_len);
	free(g.order);
	free(g.depth);
	free(g.ofunc);
	free(g.used);
	free(g.nodes);
	sfp_htab_free(&g.idx);
	free(g.fmap);
	return err;
}
