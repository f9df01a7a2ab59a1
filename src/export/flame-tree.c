// SPDX-License-Identifier: MIT
/*
 * The flame graph page's packed call tree: the writer's encoder and a
 * checking decoder for the tests (the format: flame-tree.h and
 * docs/flamegraph.md).
 *
 * Why these codes: in a big profile most frames are links of long chains
 * that one sample reached (a value of 1, the next frame one deeper), so a
 * frame costs its function's code plus two bits: gamma(1) for "next is my
 * child" and delta(1) for one sample.  The function's Huffman code takes
 * what its frequency is worth (9.9 bits a frame instead of 12 for the
 * 3,649 functions of the 150k-stack benchmark), and 13 bits in two
 * characters of a 91-letter alphabet carry 8 % more than base64's 12.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/cursor.h"
#include "flame-tree.h"

static const char alphabet[SFP_FLAME_TREE_RADIX + 1] =
	"!#$%&'()*+,-.0123456789:;=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	"[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";

_Static_assert(sizeof(alphabet) == SFP_FLAME_TREE_RADIX + 1,
	       "91 letters");
_Static_assert(SFP_FLAME_TREE_RADIX * SFP_FLAME_TREE_RADIX >= 1 << 13,
	       "two letters hold 13 bits");

void sfp_flame_bits_init(struct sfp_flame_bits *b, FILE *out)
{
	b->out = out;
	b->acc = 0;
	b->nb = 0;
	b->nbuf = 0;
}

static void emit(struct sfp_flame_bits *b)
{
	if (b->nbuf + 2 > sizeof(b->buf)) {
		fwrite(b->buf, 1, b->nbuf, b->out);
		b->nbuf = 0;
	}
	b->buf[b->nbuf++] = alphabet[b->acc / SFP_FLAME_TREE_RADIX];
	b->buf[b->nbuf++] = alphabet[b->acc % SFP_FLAME_TREE_RADIX];
	b->acc = 0;
	b->nb = 0;
}

void sfp_flame_bits_put(struct sfp_flame_bits *b, uint64_t v, unsigned int n)
{
	while (n) {
		unsigned int k = 13 - b->nb;

		if (k > n)
			k = n;
		n -= k;
		b->acc = b->acc << k | (uint32_t)(v >> n & ((1u << k) - 1));
		b->nb += k;
		if (b->nb == 13)
			emit(b);
	}
}

static unsigned int bit_len(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

void sfp_flame_bits_gamma(struct sfp_flame_bits *b, uint64_t v)
{
	unsigned int n = bit_len(v);

	sfp_flame_bits_put(b, 0, n - 1);
	sfp_flame_bits_put(b, v, n);
}

void sfp_flame_bits_delta(struct sfp_flame_bits *b, uint64_t v)
{
	unsigned int n = bit_len(v);

	sfp_flame_bits_gamma(b, n);
	sfp_flame_bits_put(b, v, n - 1);	/* without its leading 1 */
}

void sfp_flame_bits_end(struct sfp_flame_bits *b)
{
	if (b->nb)
		sfp_flame_bits_put(b, 0, 13 - b->nb);
	fwrite(b->buf, 1, b->nbuf, b->out);
	b->nbuf = 0;
}

static void put_off(struct sfp_flame_bits *b, uint64_t value, uint64_t off)
{
	if (!value)
		return;
	if (!off) {
		sfp_flame_bits_put(b, 0, 2);
	} else if (off >= value) {
		sfp_flame_bits_put(b, 1, 2);
	} else {
		sfp_flame_bits_put(b, 2, 2);
		sfp_flame_bits_delta(b, off);
	}
}

void sfp_flame_tree_put_root(struct sfp_flame_bits *b, uint64_t value,
			     bool timed, uint64_t off)
{
	/* (a root of 2^64 - 1 samples would wrap: delta of 0 is none) */
	sfp_flame_bits_delta(b, value + 1 ? value + 1 : value);
	if (timed)
		put_off(b, value, off);
}

void sfp_flame_tree_put(struct sfp_flame_bits *b, uint32_t code,
			unsigned int code_len, uint64_t up, uint64_t value,
			bool timed, uint64_t off)
{
	sfp_flame_bits_put(b, code, code_len);
	sfp_flame_bits_gamma(b, up + 1);
	sfp_flame_bits_delta(b, value);
	if (timed)
		put_off(b, value, off);
}

struct sym {
	uint64_t w;
	size_t i;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int sfp_flame_code_lengths(const uint64_t *freq, size_t n, uint8_t *len)
{
	struct sym *s;
	uint64_t *w;
	size_t *up, k, li, ii, next;
	uint8_t *d;
	int err = -ENOMEM;

	if (n <= 1) {
		if (n)
			len[0] = 1;
		return 0;
	}
	s = malloc(n * sizeof(*s));
	w = malloc((2 * n - 1) * sizeof(*w));
	up = malloc((2 * n - 1) * sizeof(*up));
	d = malloc((2 * n - 1) * sizeof(*d));
	if (!s || !w || !up || !d)
		goto out;
	for (k = 0; k < n; k++)
		s[k] = (struct sym){ .w = freq[k] ? freq[k] : 1, .i = k };
	qsort(s, n, sizeof(*s), cmp_sym);
	for (;;) {
		unsigned int max = 0;

		/*
		 * Huffman's merges with two queues: the leaves in weight
		 * order, and the merged nodes, made in weight order too.
		 */
		for (k = 0; k < n; k++)
			w[k] = s[k].w;
		for (li = 0, ii = next = n; next < 2 * n - 1; next++) {
			size_t pick[2], j;

			for (j = 0; j < 2; j++)
				pick[j] = li < n && (ii == next || w[li] <= w[ii]) ?
					  li++ : ii++;
			w[next] = w[pick[0]] + w[pick[1]];
			up[pick[0]] = up[pick[1]] = next;
		}
		/* depths from the root (made last) down: parents come later */
		d[2 * n - 2] = 0;
		for (k = 2 * n - 2; k-- > 0;) {
			d[k] = (uint8_t)(d[up[k]] + 1 < 255 ? d[up[k]] + 1 : 255);
			if (k < n && d[k] > max)
				max = d[k];
		}
		if (max <= SFP_FLAME_CODE_MAX)
			break;
		/* too long: flatten the frequencies (halving keeps the order) */
		for (k = 0; k < n; k++)
			s[k].w = (s[k].w + 1) / 2;
	}
	for (k = 0; k < n; k++)
		len[s[k].i] = d[k];
	err = 0;
out:
	free(s);
	free(w);
	free(up);
	free(d);
	return err;
}

/* --- reading back ---------------------------------------------------------- */

struct reader {
	struct sfp_cursor c;
	uint32_t acc;
	unsigned int nb;
	char *err;
	size_t err_len;
};

static int bad(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (r->err_len) {
		n = snprintf(r->err, r->err_len, "offset %zu: ",
			     sfp_cursor_off(&r->c));
		if (n < 0 || (size_t)n >= r->err_len)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->err_len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static int letter(struct reader *r, unsigned int *d)
{
	const char *at;
	uint8_t ch;

	if (sfp_cursor_u8(&r->c, &ch))
		return bad(r, "the tree text ends inside a frame");
	at = ch ? memchr(alphabet, ch, SFP_FLAME_TREE_RADIX) : NULL;
	if (!at)
		return bad(r, "byte 0x%02x is not a letter of the tree", ch);
	*d = (unsigned int)(at - alphabet);
	return 0;
}

/* The next @n (<= 32) bits. */
static int get(struct reader *r, unsigned int n, uint64_t *v)
{
	uint64_t out = 0;

	while (n) {
		unsigned int k;

		if (!r->nb) {
			unsigned int hi, lo;

			if (letter(r, &hi) || letter(r, &lo))
				return -EBADMSG;
			r->acc = hi * SFP_FLAME_TREE_RADIX + lo;
			if (r->acc >= 1u << 13)
				return bad(r, "letter pair above 13 bits");
			r->nb = 13;
		}
		k = n < r->nb ? n : r->nb;
		r->nb -= k;
		out = out << k | (r->acc >> r->nb & ((1u << k) - 1));
		n -= k;
	}
	*v = out;
	return 0;
}

static int get_gamma(struct reader *r, uint64_t *v)
{
	unsigned int z = 0;
	uint64_t b = 0, low;

	for (;;) {
		if (get(r, 1, &b))
			return -EBADMSG;
		if (b)
			break;
		if (++z > 63)
			return bad(r, "a gamma code over 64 bits");
	}
	if (z > 32) {
		uint64_t hi;

		if (get(r, z - 32, &hi) || get(r, 32, &low))
			return -EBADMSG;
		*v = (1ull << z) | hi << 32 | low;
		return 0;
	}
	if (get(r, z, &low))
		return -EBADMSG;
	*v = (1ull << z) | low;
	return 0;
}

static int get_delta(struct reader *r, uint64_t *v)
{
	uint64_t n, hi = 0, low;

	if (get_gamma(r, &n))
		return -EBADMSG;
	if (n > 64)
		return bad(r, "a delta code over 64 bits");
	n--;	/* the bits below the leading 1 */
	if (n > 32 && get(r, (unsigned int)n - 32, &hi))
		return -EBADMSG;
	if (get(r, n > 32 ? 32 : (unsigned int)n, &low))
		return -EBADMSG;
	*v = 1ull << n | hi << 32 | low;
	return 0;
}

/* A function by its canonical code (flame-tree.h). */
static int get_func(struct reader *r, const uint32_t *count,
		    unsigned int max_len, uint64_t *f)
{
	uint64_t code = 0, first = 0, index = 0, b;
	unsigned int l;

	for (l = 1; l <= max_len; l++) {
		if (get(r, 1, &b))
			return -EBADMSG;
		code |= b;
		/* the codes of l bits are first .. first + count[l] - 1 */
		if (code - first < count[l]) {
			*f = index + (code - first);
			return 0;
		}
		index += count[l];
		first = (first + count[l]) << 1;
		code <<= 1;
	}
	return bad(r, "no function has this code");
}

static int get_off(struct reader *r, uint64_t value, uint64_t *off)
{
	uint64_t k;

	*off = 0;
	if (!value)
		return 0;
	if (get(r, 2, &k))
		return -EBADMSG;
	if (k == 0)
		return 0;
	if (k == 1) {
		*off = value;
		return 0;
	}
	if (k == 3)
		return bad(r, "off-CPU kind 3");
	if (get_delta(r, off))
		return -EBADMSG;
	if (*off >= value)
		return bad(r, "off-CPU part %llu not below the frame's %llu",
			   (unsigned long long)*off,
			   (unsigned long long)value);
	return 0;
}

int sfp_flame_tree_decode(const char *s, size_t len, size_t n,
			  const uint32_t *count, unsigned int max_len,
			  bool timed, bool preview, struct sfp_flame_tree *t,
			  char *err, size_t err_len)
{
	struct reader r = { .err = err, .err_len = err_len };
	uint64_t v, depth = 1, kraft = 0;
	size_t i;
	unsigned int l;

	memset(t, 0, sizeof(*t));
	if (err_len)
		err[0] = 0;
	sfp_cursor_init(&r.c, s, len, false);
	if (!n || max_len > SFP_FLAME_CODE_MAX)
		return bad(&r, "%zu frames, codes of up to %u bits", n, max_len);
	/* a prefix code: no more codes of each length than there is room */
	for (l = 1; l <= max_len; l++) {
		kraft += (uint64_t)count[l] << (SFP_FLAME_CODE_MAX - l);
		if (kraft > 1ull << SFP_FLAME_CODE_MAX)
			return bad(&r, "more function codes than a prefix code has");
	}
	/* every frame takes at least 3 bits: do not trust n for memory */
	if (n - 1 > len / 2 * 13 / 3 + 1)
		return bad(&r, "%zu frames cannot fit in %zu letters", n, len);
	t->n = n;
	t->depth = calloc(n, sizeof(*t->depth));
	t->func = calloc(n, sizeof(*t->func));
	t->value = calloc(n, sizeof(*t->value));
	t->off = timed ? calloc(n, sizeof(*t->off)) : NULL;
	t->gap = preview ? calloc(n, sizeof(*t->gap)) : NULL;
	if (!t->depth || !t->func || !t->value || (timed && !t->off) ||
	    (preview && !t->gap)) {
		sfp_flame_tree_free(t);
		return -ENOMEM;
	}
	t->func[0] = -1;
	if (get_delta(&r, &v))
		goto bad;
	t->value[0] = v - 1;
	if (timed && get_off(&r, t->value[0], &t->off[0]))
		goto bad;
	for (i = 1; i < n; i++) {
		uint64_t f = 0, up = 0;

		if (!depth || depth > UINT32_MAX) {
			bad(&r, "frame %zu at depth %llu", i,
			    (unsigned long long)depth);
			goto bad;
		}
		t->depth[i] = (uint32_t)depth;
		if (get_func(&r, count, max_len, &f) || get_gamma(&r, &up))
			goto bad;
		t->func[i] = (int64_t)f;
		up--;
		if (up > depth) {
			bad(&r, "frame %zu climbs %llu levels from depth %llu",
			    i, (unsigned long long)up,
			    (unsigned long long)depth);
			goto bad;
		}
		depth = depth + 1 - up;
		if (get_delta(&r, &t->value[i]))
			goto bad;
		if (timed && get_off(&r, t->value[i], &t->off[i]))
			goto bad;
		if (preview) {
			if (get_delta(&r, &t->gap[i]))
				goto bad;
			t->gap[i]--;
		}
	}
	if (n > 1 && depth != 1) {
		bad(&r, "the last frame leaves %llu levels open",
		    (unsigned long long)depth - 1);
		goto bad;
	}
	/* what is left: zero padding of the last letter pair only */
	if (r.acc & ((1u << r.nb) - 1)) {
		bad(&r, "padding bits are not zero");
		goto bad;
	}
	if (sfp_cursor_left(&r.c)) {
		bad(&r, "%zu letters after the last frame",
		    sfp_cursor_left(&r.c));
		goto bad;
	}
	return 0;
bad:
	sfp_flame_tree_free(t);
	return -EBADMSG;
}

void sfp_flame_tree_free(struct sfp_flame_tree *t)
{
	free(t->depth);
	free(t->func);
	free(t->value);
	free(t->off);
	free(t->gap);
	memset(t, 0, sizeof(*t));
}
