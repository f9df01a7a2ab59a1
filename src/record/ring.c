// SPDX-License-Identifier: MIT
/*
 * Reading one perf mmap ring.  The kernel writes records back to back in a
 * power-of-two data area; a record may wrap around its end, so every record
 * is copied out (in up to two pieces) into the caller's aligned buffer before
 * anyone parses it.  The ring is shared with the kernel and therefore
 * untrusted: data_head and each header.size are checked before use.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/record.h"

int sfp_ring_map(struct sfp_ring *rg, int fd, int cpu, uint32_t data_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	void *p;

	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	len = (size_t)(data_pages + 1) * (size_t)page;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	rg->base = p;
	rg->mmap_len = len;
	rg->data = (uint8_t *)p + page;
	rg->data_size = (uint64_t)data_pages * (uint64_t)page;
	rg->tail = __atomic_load_n(&((struct perf_event_mmap_page *)p)->data_tail,
				   __ATOMIC_ACQUIRE);
	rg->cpu = cpu;
	rg->fd = fd;
	return 0;
}

void sfp_ring_unmap(struct sfp_ring *rg)
{
	if (rg->base)
		munmap(rg->base, rg->mmap_len);
	rg->base = NULL;
	rg->data = NULL;
}

/* Copy n bytes starting at ring position pos, wrapping at the end. */
static void ring_copy(const struct sfp_ring *rg, uint64_t pos, void *dst,
		      size_t n)
{
	uint64_t off = pos & (rg->data_size - 1);
	size_t first = n;

	if (off + n > rg->data_size)
		first = (size_t)(rg->data_size - off);
	memcpy(dst, rg->data + off, first);
	if (first < n)
		memcpy((uint8_t *)dst + first, rg->data, n - first);
}

int sfp_ring_next(struct sfp_ring *rg, void *buf, size_t cap)
{
	struct perf_event_mmap_page *pc = rg->base;
	struct perf_event_header h;
	uint64_t head, avail;

	if (!pc)
		return 0;
	/* Pairs with the kernel's store of data_head after the data. */
	head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	avail = head - rg->tail;
	if (!avail)
		return 0;
	if (avail > rg->data_size || avail < sizeof(h)) {
		pr_warn("ring of cpu %d: data_head %#llx is %llu bytes past our "
			"tail (ring holds %llu)", rg->cpu,
			(unsigned long long)head, (unsigned long long)avail,
			(unsigned long long)rg->data_size);
		return -EBADMSG;
	}
	ring_copy(rg, rg->tail, &h, sizeof(h));
	if (h.size < sizeof(h) || (h.size & 7) || h.size > avail) {
		pr_warn("ring of cpu %d: record at %#llx has impossible size %u "
			"(type %u, %llu bytes published)", rg->cpu,
			(unsigned long long)rg->tail, h.size, h.type,
			(unsigned long long)avail);
		return -EBADMSG;
	}
	if (h.size > cap)
		return -ENOSPC;
	ring_copy(rg, rg->tail, buf, h.size);
	rg->tail += h.size;
	return h.size;
}

void sfp_ring_consume(struct sfp_ring *rg)
{
	struct perf_event_mmap_page *pc = rg->base;

	/* Our reads of the data happen before the kernel may overwrite it. */
	if (pc)
		__atomic_store_n(&pc->data_tail, rg->tail, __ATOMIC_RELEASE);
}
