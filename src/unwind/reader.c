// SPDX-License-Identifier: MIT
/*
 * Memory readers: a stack snapshot, a live process, the calling process.
 * Every read is checked; a bad address is an error, never a fault.
 *
 * Live-process and self reads go through process_vm_readv(), which fails
 * with EFAULT on unmapped memory instead of raising SIGSEGV.  Pages proven
 * readable are remembered for the rest of one walk, so a walk over a stack
 * costs one system call per page rather than one per word.
 */
#include <sys/uio.h>
#include <unistd.h>

#include "unwind/unwind-internal.h"

int unw_vm_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : errno == EPERM ? -EPERM
								 : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

int sfp_reader__new_snapshot(const void *stack, size_t size, uint64_t sp,
			     struct sfp_reader **out)
{
	struct sfp_reader *r;

	if (!out || (!stack && size))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->kind = UNW_READER_SNAPSHOT;
	r->stack = stack;
	r->size = size;
	r->sp = sp;
	*out = r;
	return 0;
}

int sfp_reader__set_snapshot(struct sfp_reader *r, const void *stack,
			     size_t size, uint64_t sp)
{
	if (!r || r->kind != UNW_READER_SNAPSHOT || (!stack && size))
		return -EINVAL;
	r->stack = stack;
	r->size = size;
	r->sp = sp;
	r->other = NULL;
	r->other_len = 0;
	r->other_addr = 0;
	return 0;
}

int sfp_reader__set_other_stack(struct sfp_reader *r, const void *bytes,
				size_t len, uint64_t addr)
{
	if (!r || r->kind != UNW_READER_SNAPSHOT || (!bytes && len) ||
	    addr + len < addr)
		return -EINVAL;
	/* Apart from the stack: an address reads from one region only. */
	if (len && addr < r->sp + r->size && r->sp < addr + len)
		return -EINVAL;
	r->other = bytes;
	r->other_len = len;
	r->other_addr = addr;
	return 0;
}

/* First mapping of a process, to probe our access to it. */
static int first_mapping(pid_t pid, uint64_t *addr)
{
	char path[64], line[256];
	unsigned long long a;
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%llx-%*x %7s", &a, perms) == 2 &&
		    perms[0] == 'r') {
			*addr = a;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int sfp_reader__new_pid(pid_t pid, struct sfp_reader **out)
{
	struct sfp_reader *r;
	uint64_t probe_addr;
	uint8_t probe;
	int err, i;

	if (!out || pid <= 0)
		return -EINVAL;
	err = first_mapping(pid, &probe_addr);
	if (err == -EACCES)
		return -EPERM;
	if (err)
		return err;
	/* process_vm_readv needs PTRACE_MODE_ATTACH: find out now, not in
	 * the middle of a walk. */
	err = unw_vm_read(pid, probe_addr, &probe, 1);
	if (err == -ESRCH || err == -EPERM)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->page_buf = malloc((size_t)UNW_PID_PAGES * UNW_PAGE_SIZE);
	if (!r->page_buf) {
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < UNW_PID_PAGES; i++)
		r->pages[i].data = r->page_buf + (size_t)i * UNW_PAGE_SIZE;
	r->kind = UNW_READER_PID;
	r->pid = pid;
	*out = r;
	return 0;
}

int sfp_reader__new_self(struct sfp_reader **out)
{
	struct sfp_reader *r;

	if (!out)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->kind = UNW_READER_SELF;
	r->pid = getpid();
	*out = r;
	return 0;
}

void sfp_reader__free(struct sfp_reader **r)
{
	if (!r || !*r)
		return;
	free((*r)->page_buf);
	free(*r);
	*r = NULL;
}

void unw_reader_begin(struct sfp_reader *r)
{
	unsigned int i;

	if (r->kind == UNW_READER_SNAPSHOT)	/* nothing cached */
		return;
	for (i = 0; i < UNW_PID_PAGES; i++)
		r->pages[i].addr = 0;
	for (i = 0; i < UNW_SELF_PAGES; i++)
		r->ok_pages[i] = 0;
	r->next_page = 0;
	r->next_ok = 0;
}

static int snapshot_read(const struct sfp_reader *r, uint64_t addr,
			 void *buf, size_t len)
{
	uint64_t off = addr - r->sp;

	if (r->other_len && addr - r->other_addr < r->other_len) {
		off = addr - r->other_addr;
		/* the region ran out: as the stack's end does */
		if (len > r->other_len - off)
			return -ERANGE;
		memcpy(buf, r->other + off, len);
		return 0;
	}
	/* past the end of the other stack's copy, below this stack: that
	 * copy ran out, as the stack's does at its end */
	if (r->other_len && addr >= r->other_addr && addr < r->sp)
		return -ERANGE;
	if (addr < r->sp)
		return -EFAULT;
	if (off > r->size || len > r->size - off)
		return -ERANGE;
	memcpy(buf, r->stack + off, len);
	return 0;
}

bool unw_reader_other_stack(const struct sfp_reader *r, uint64_t addr)
{
	return r->other_len && addr - r->other_addr < r->other_len;
}

/* Live process: whole pages are fetched and kept for the walk. */
static int pid_read(struct sfp_reader *r, uint64_t addr, void *buf,
		    size_t len)
{
	uint8_t *dst = buf;

	if (addr + len < addr)
		return -EFAULT;
	while (len) {
		uint64_t page = addr & ~(uint64_t)(UNW_PAGE_SIZE - 1);
		size_t off = addr - page, n = UNW_PAGE_SIZE - off;
		struct unw_page *p = NULL;
		unsigned int i;
		int err;

		if (!page)
			return -EFAULT;
		for (i = 0; i < UNW_PID_PAGES; i++)
			if (r->pages[i].addr == page) {
				p = &r->pages[i];
				break;
			}
		if (!p) {
			p = &r->pages[r->next_page];
			r->next_page = (r->next_page + 1) % UNW_PID_PAGES;
			p->addr = 0;
			err = unw_vm_read(r->pid, page, p->data, UNW_PAGE_SIZE);
			if (err)
				return err == -ESRCH ? -EFAULT : err;
			p->addr = page;
		}
		if (n > len)
			n = len;
		memcpy(dst, p->data + off, n);
		dst += n;
		addr += n;
		len -= n;
	}
	return 0;
}

int unw_self_read(uint64_t *pages, unsigned int n, unsigned int *next,
		  pid_t self, uint64_t addr, void *buf, size_t len)
{
	uint64_t first, last, p;
	unsigned int i;
	bool known = true;
	int err;

	if (!len)
		return 0;
	if (addr + len < addr || addr < UNW_PAGE_SIZE)
		return -EFAULT;
	first = addr & ~(uint64_t)(UNW_PAGE_SIZE - 1);
	last = (addr + len - 1) & ~(uint64_t)(UNW_PAGE_SIZE - 1);
	for (p = first; known && p <= last; p += UNW_PAGE_SIZE) {
		known = false;
		for (i = 0; i < n; i++)
			if (pages[i] == p) {
				known = true;
				break;
			}
	}
	if (known) {
		memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	err = unw_vm_read(self, addr, buf, len);
	if (err)
		return -EFAULT;
	for (p = first; p <= last; p += UNW_PAGE_SIZE) {
		pages[*next] = p;
		*next = (*next + 1) % n;
	}
	return 0;
}

int sfp_reader__read(struct sfp_reader *r, uint64_t addr, void *buf,
		     size_t len)
{
	if (!r || (!buf && len))
		return -EINVAL;
	switch (r->kind) {
	case UNW_READER_SNAPSHOT:
		return snapshot_read(r, addr, buf, len);
	case UNW_READER_PID:
		return pid_read(r, addr, buf, len);
	case UNW_READER_SELF:
		return unw_self_read(r->ok_pages, UNW_SELF_PAGES, &r->next_ok,
				     r->pid, addr, buf, len);
	default:
		return -EINVAL;
	}
}
