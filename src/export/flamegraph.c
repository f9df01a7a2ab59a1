// SPDX-License-Identifier: MIT
/*
 * The "flamegraph" export: one self-contained, interactive HTML file.
 *
 * The profile's prefix tree of locations becomes a call tree of functions
 * (inlined functions as frames of their own, outermost first), siblings
 * merged by function and sorted by name as flame graphs do.  It is written
 * into the page in depth-first pre-order as three flat arrays (depth,
 * function, samples) plus the per-function names, DSOs and kinds, which
 * keeps even a million-frame tree a few megabytes and lets the viewer
 * (src/export/flamegraph/viewer.js, compiled in by mk/embed.sh) work by
 * linear scans.  The page loads nothing: CSS, script and data are inline.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export-int.h"
#include "flame-json.h"
#include "flamegraph-assets.h"	/* generated: sfp_asset_* */

/* A frame of the merged call tree.  Children are a singly linked list. */
struct fg_node {
	uint32_t parent;
	uint32_t func;		/* profile func index; UINT32_MAX at the root */
	uint32_t first_child, next_sibling;
	uint64_t value;
};

struct fg {
	const struct sfp_profile *p;
	struct fg_node *nodes;
	size_t nr, cap;
	/* (parent, func) -> node, open addressing; 0 is empty (the root is
	 * never anyone's child) */
	uint32_t *hash;
	size_t hash_cap;
	uint32_t *fmap;		/* profile func -> output func, UINT32_MAX unused */
	uint32_t nr_out_funcs;
};

#define NONE UINT32_MAX

static size_t hash_slot(uint32_t parent, uint32_t func, size_t mask)
{
	/* a full 64-bit mix: both halves must reach the low bits we keep */
	uint64_t h = (uint64_t)parent << 32 | func;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (size_t)h & mask;
}

static int grow_hash(struct fg *g)
{
	size_t ncap = g->hash_cap ? g->hash_cap * 2 : 1024, i;
	uint32_t *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 1; i < g->nr; i++) {
		size_t s = hash_slot(g->nodes[i].parent, g->nodes[i].func, ncap - 1);

		while (n[s])
			s = (s + 1) & (ncap - 1);
		n[s] = (uint32_t)i;
	}
	free(g->hash);
	g->hash = n;
	g->hash_cap = ncap;
	return 0;
}

/* The child of @parent for @func, made if missing.  Return its index. */
static int64_t child(struct fg *g, uint32_t parent, uint32_t func)
{
	struct fg_node *n;
	size_t s;

	if ((g->nr + 1) * 2 > g->hash_cap && grow_hash(g))
		return -ENOMEM;
	for (s = hash_slot(parent, func, g->hash_cap - 1); g->hash[s];
	     s = (s + 1) & (g->hash_cap - 1)) {
		n = &g->nodes[g->hash[s]];
		if (n->parent == parent && n->func == func)
			return g->hash[s];
	}
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
	g->nodes[parent].first_child = (uint32_t)g->nr;
	g->hash[s] = (uint32_t)g->nr;
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
 * Merge the profile's stacks into the call tree: every profile node maps
 * to the frame of its innermost line, reached from its parent's frame
 * through the loc's lines, outermost first.  Counts are samples.  A file
 * with several events gets one subtree per event below the root (func
 * index nr_funcs + event), since adding up cycles and page faults means
 * nothing.
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
	uint64_t *self = NULL, *sub = NULL;
	int err = -ENOMEM;

	g->cap = 1024;
	g->nodes = malloc(g->cap * sizeof(*g->nodes));
	g->fmap = malloc((nf + ne + 1) * sizeof(*g->fmap));
	map = malloc((nn ? nn : 1) * sizeof(*map));
	order = malloc((nn ? nn : 1) * sizeof(*order));
	self = calloc(nn ? nn : 1, sizeof(*self));
	sub = calloc(nn ? nn : 1, sizeof(*sub));
	if (!g->nodes || !g->fmap || !map || !order || !self || !sub)
		goto out;
	memset(g->fmap, 0xff, (nf + ne + 1) * sizeof(*g->fmap));
	g->nodes[0] = (struct fg_node){ .parent = NONE, .func = NONE,
					.first_child = NONE,
					.next_sibling = NONE };
	g->nr = 1;
	if (grow_hash(g))
		goto out;

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

			if (!split || s->event == e)
				self[s->stack < nn ? s->stack : 0]++;
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
		for (i = 0; i < nn; i++)
			g->nodes[map[i]].value += self[i];
	}
	/* children were made after their parents: sum up in reverse */
	for (i = g->nr; i-- > 1;)
		g->nodes[g->nodes[i].parent].value += g->nodes[i].value;
	err = 0;
out:
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

static void write_sub(FILE *out, const struct sfp_profile *p, size_t total)
{
	const char *host = sfp_profile__hostname(p);
	size_t i, ne = sfp_profile__nr_events(p);
	char buf[64];

	fputs(",\n\"sub\":", out);
	/* assembled in a memory stream so that it can be escaped once */
	{
		char *s = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&s, &len);

		if (!m) {
			sfp_flame_json_str(out, "");
			return;
		}
		if (host)
			fprintf(m, "%s \u00b7 ", host);
		for (i = 0; i < ne; i++) {
			const struct sfp_profile_event *e = sfp_profile__event(p, i);

			fprintf(m, "%s%s", i ? ", " : "", e && e->name ? e->name : "?");
		}
		snprintf(buf, sizeof(buf), "%zu", total);
		fprintf(m, "%s%s samples \u00b7 sfprof", ne ? " \u00b7 " : "", buf);
		fclose(m);
		sfp_flame_json_str(out, s);
		free(s);
	}
}

static int write_data(struct fg *g, FILE *out, const char *title)
{
	const struct sfp_profile *p = g->p;
	uint32_t *order = malloc(g->nr * sizeof(*order));
	uint32_t *depth = malloc(g->nr * sizeof(*depth));
	uint32_t *ofunc = NULL, *used = NULL;
	size_t n = 0, i, nf = sfp_profile__nr_funcs(p), nu = 0;
	int err = -ENOMEM;

	if (!order || !depth)
		goto out;
	err = preorder(g, order, depth, &n);
	if (err)
		goto out;
	err = -ENOMEM;
	ofunc = malloc(n * sizeof(*ofunc));
	used = malloc((nf + sfp_profile__nr_events(p) + 1) * sizeof(*used));
	if (!ofunc || !used)
		goto out;
	for (i = 0; i < n; i++) {
		uint32_t f = g->nodes[order[i]].func;

		if (f == NONE) {
			ofunc[i] = NONE;
			continue;
		}
		if (g->fmap[f] == NONE) {
			g->fmap[f] = (uint32_t)nu;
			used[nu++] = f;
		}
		ofunc[i] = g->fmap[f];
	}

	fputs("{\"v\":1,\n\"title\":", out);
	sfp_flame_json_str(out, title);
	write_sub(out, p, sfp_profile__nr_samples(p));
	fputs(",\n\"unit\":\"samples\",\n\"names\":[", out);
	for (i = 0; i < nu; i++) {
		if (i)
			putc(',', out);
		sfp_flame_json_str(out, func_name(p, used[i]));
	}
	/* DSO names: interned by pointer (the profile's strings are) */
	fputs("],\n\"dsos\":[", out);
	{
		const char **seen = malloc((nu ? nu : 1) * sizeof(*seen));
		size_t nd = 0, j;
		uint32_t *fd = malloc((nu ? nu : 1) * sizeof(*fd));

		if (!seen || !fd) {
			free(seen);
			free(fd);
			goto out;
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

			fd[i] = used[i] >= nf ? 2 :
				f && f->kind == SFP_PROFILE_KERNEL;
		}
		write_u32_array(out, "fkind", fd, nu);
		free(seen);
		free(fd);
	}
	write_u32_array(out, "depth", depth, n);
	fputs(",\n\"func\":[", out);
	for (i = 0; i < n; i++) {
		if (i)
			putc(',', out);
		if (ofunc[i] == NONE)
			fputs("-1", out);
		else
			fprintf(out, "%" PRIu32, ofunc[i]);
	}
	fputs("],\n\"value\":[", out);
	for (i = 0; i < n; i++)
		fprintf(out, i ? ",%" PRIu64 : "%" PRIu64,
			g->nodes[order[i]].value);
	fputs("]}", out);
	err = 0;
out:
	free(order);
	free(depth);
	free(ofunc);
	free(used);
	return err;
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
	struct fg g = { .p = p };
	int err;

	if (!title || !*title)
		title = sfp_profile__cmdline(p);
	if (!title || !*title)
		title = "sfprof flame graph";
	err = build(&g, user_only);
	if (!err)
		err = write_page(&g, out, title);
	free(g.nodes);
	free(g.hash);
	free(g.fmap);
	return err;
}
