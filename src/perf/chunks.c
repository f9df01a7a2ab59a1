// SPDX-License-Identifier: MIT
/*
 * The reader's recycled read buffers (see chunks.h for why).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/prefault.h"
#include "perf/chunks.h"

#define CHUNKS_PER_SLAB (SFP_HUGE_PAGE / SFP_CHUNK_SIZE)

/* Under AddressSanitizer each buffer is a heap block of its own, so that
 * a read past a buffer's end meets a redzone, not the next buffer. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHUNKS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CHUNKS_ASAN 1
#endif

struct sfp_chunk {
	uint8_t *buf;		/* SFP_CHUNK_SIZE bytes in a slab */
	uint64_t off;		/* file offset of buf[0] */
	size_t len;		/* bytes read into buf */
	uint32_t refs;		/* queued records in it */
	uint16_t id;
	struct sfp_chunk *next_free;
};

int sfp_chunks_init(struct sfp_chunks *cs, int fd, uint64_t end)
{
	memset(cs, 0, sizeof(*cs));
	cs->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (cs->fd < 0)
		return -errno;
	cs->end = end;
	return 0;
}

void sfp_chunks_fini(struct sfp_chunks *cs)
{
	size_t i;

	for (i = 0; i < cs->nr; i++) {
#ifdef CHUNKS_ASAN
		free(cs->all[i]->buf);
#endif
		free(cs->all[i]);
	}
	free(cs->all);
	for (i = 0; i < cs->nslabs; i++)
		munmap(cs->slabs[i], SFP_HUGE_PAGE);
	free(cs->slabs);
	if (cs->fd >= 0)
		close(cs->fd);
	memset(cs, 0, sizeof(*cs));
	cs->fd = -1;
}

/* A buffer for a new chunk: cut from the current slab, or from a new one
 * (a huge page, faulted in whole at once); NULL without memory. */
static uint8_t *new_buf(struct sfp_chunks *cs)
{
	uint8_t *b;

#ifdef CHUNKS_ASAN
	(void)cs;
	b = malloc(SFP_CHUNK_SIZE);
	if (b)	/* every byte of it is written before it is read */
		sfp_prefault(b, SFP_CHUNK_SIZE);
#else
	if (cs->slab_used == CHUNKS_PER_SLAB || !cs->nslabs) {
		uint8_t **sl = realloc(cs->slabs,
				       (cs->nslabs + 1) * sizeof(*sl));

		if (!sl)
			return NULL;
		cs->slabs = sl;
		sl[cs->nslabs] = sfp_huge_map(SFP_HUGE_PAGE);
		if (!sl[cs->nslabs])
			return NULL;
		/* a huge page: faulted in whole, once */
		if (sfp_thp_available())
			sfp_prefault(sl[cs->nslabs], SFP_HUGE_PAGE);
		cs->nslabs++;
		cs->slab_used = 0;
	}
	b = cs->slabs[cs->nslabs - 1] + cs->slab_used++ * SFP_CHUNK_SIZE;
	/* every byte of it is written before it is read */
	if (!sfp_thp_available())
		sfp_prefault(b, SFP_CHUNK_SIZE);
#endif
	return b;
}

/* A chunk to read into: a free one, else a new one; NULL without memory. */
static struct sfp_chunk *take(struct sfp_chunks *cs)
{
	struct sfp_chunk *c = cs->free, **all;

	if (c) {
		cs->free = c->next_free;
		return c;
	}
	if (cs->nr >= SFP_CHUNKS_MAX)
		return NULL;
	all = realloc(cs->all, (cs->nr + 1) * sizeof(*all));
	if (!all)
		return NULL;
	cs->all = all;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->buf = new_buf(cs);
	if (!c->buf) {
		free(c);
		return NULL;
	}
	c->id = (uint16_t)(cs->nr + 1);
	cs->all[cs->nr++] = c;
	return c;
}

static void let_go(struct sfp_chunks *cs, struct sfp_chunk *c)
{
	if (c != cs->cur && !c->refs) {
		c->next_free = cs->free;
		cs->free = c;
	}
}

const uint8_t *sfp_chunks_get(struct sfp_chunks *cs, uint64_t off,
			      size_t len, int *err)
{
	struct sfp_chunk *c = cs->cur, *n;
	size_t keep = 0, want;

	if (c && off >= c->off && off - c->off <= c->len &&
	    len <= c->len - (off - c->off))
		return c->buf + (off - c->off);
	if (len > SFP_CHUNK_SIZE / 2 || off > cs->end || len > cs->end - off) {
		*err = -EINVAL;
		return NULL;
	}
	n = take(cs);
	if (!n) {
		*err = -ENOMEM;
		return NULL;
	}
	/* the bytes of [off, ...) already read come along */
	if (c && off >= c->off && off - c->off < c->len) {
		keep = c->len - (size_t)(off - c->off);
		memcpy(n->buf, c->buf + (off - c->off), keep);
	}
	n->off = off;
	n->len = keep;
	n->refs = 0;
	want = SFP_CHUNK_SIZE;
	if (want > cs->end - off)
		want = (size_t)(cs->end - off);
	while (n->len < want) {
		ssize_t k = pread(cs->fd, n->buf + n->len, want - n->len,
				  (off_t)(off + n->len));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			*err = k < 0 ? -errno : -EBADMSG;
			n->next_free = cs->free;
			cs->free = n;
			return NULL;
		}
		n->len += (size_t)k;
	}
	cs->cur = n;
	if (c)
		let_go(cs, c);
	if (len > n->len) {
		*err = -EBADMSG;
		return NULL;
	}
	return n->buf;
}

uint16_t sfp_chunks_ref(struct sfp_chunks *cs)
{
	if (!cs->cur || cs->cur->refs == UINT32_MAX)
		return 0;
	cs->cur->refs++;
	return cs->cur->id;
}

void sfp_chunks_unref(struct sfp_chunks *cs, uint16_t id)
{
	struct sfp_chunk *c;

	if (!id || id > cs->nr)
		return;
	c = cs->all[id - 1];
	if (c->refs && !--c->refs)
		let_go(cs, c);
}
