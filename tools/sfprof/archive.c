// SPDX-License-Identifier: MIT
/*
 * `sfprof archive`: pack what a recording needs to be read on another
 * machine, as `perf archive` does: a tar.bz2 of the build-id cache
 * entries (the .build-id/xx/rest links and the <path>/<build-id>
 * directories they point at) of every DSO the file names in its
 * HEADER_BUILD_ID section.  Unpacked into a build-id directory, or given
 * to `sfprof report --symfs`, it names the frames after the binaries (or
 * their containers) are gone.  The tar.bz2 is written here (no tar(1)),
 * into an output that follows common/outfile.h like every other -o.
 */
#include <bzlib.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "cli.h"
#include "perf/buildid-cache.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof archive [-i FILE] [-o ARCHIVE] [--buildid-dir DIR]\n"
"\n"
"Pack the build-id cache entries of the DSOs a perf.data file names (its\n"
"build-id list) into a tar.bz2, like perf archive, for reading the\n"
"recording elsewhere: unpack it into a build-id directory\n"
"(tar xf ARCHIVE -C ~/.debug) or into any DIR and run\n"
"'sfprof report --symfs DIR' (or --buildid-dir DIR).\n"
"\n"
"  -i, --input FILE       perf.data file (default: perf.data)\n"
"  -o, --output ARCHIVE   archive to write (default: FILE.tar.bz2)\n"
"      --buildid-dir DIR  build-id cache to read (default $PERF_BUILDID_DIR,\n"
"                         else ~/.debug)\n"
"  -h, --help             this text\n"
"Exit: 0 ok, 1 nothing to pack, 2 usage or I/O error (ARCHIVE is then\n"
"left as it was).\n");
}

/* The names to pack, relative to the cache directory, each once. */
struct names {
	char **v;
	size_t n;
};

static int names_add(struct names *l, const char *name)
{
	char **nv;
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return 0;
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	l->v = nv;
	l->v[l->n] = strdup(name);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

/*
 * A cache entry's link and the directory it points at, relative to dir.
 * *debug: whether that directory holds the DSO's debug file ("debug"
 * beside "elf", perf's layout: record puts there the one it found, in
 * the image of a container, the host's debug directories or debuginfod's
 * cache), which goes into the archive with the directory.
 * Return: 0, -ENOENT (not in the cache, or pointing out of it), -ENOMEM.
 */
static int add_entry(struct names *l, const char *dir, const uint8_t *id,
		     size_t len, bool *debug)
{
	char link[PATH_MAX], target[PATH_MAX], real_dir[PATH_MAX];
	char dbg[PATH_MAX + 8];
	struct stat st;
	size_t dl;
	int err;

	if (sfp_buildid_cache_path(dir, id, len, NULL, link, sizeof(link)) ||
	    !realpath(dir, real_dir) || !realpath(link, target))
		return -ENOENT;
	dl = strlen(real_dir);
	if (strncmp(target, real_dir, dl) || target[dl] != '/')
		return -ENOENT;	/* points out of the cache: not ours */
	snprintf(dbg, sizeof(dbg), "%s/debug", target);
	*debug = !lstat(dbg, &st) && S_ISREG(st.st_mode);
	err = names_add(l, link + strlen(dir) + 1);
	return err ? err : names_add(l, target + dl + 1);
}

/*
 * The tar stream, written by us into the output (so that -o follows the
 * rules of every other output, common/outfile.h) and compressed with
 * libbz2 at bzip2's default level, as `tar -cjf` did: POSIX ustar
 * headers, a pax extended header for a name, link or number that does
 * not fit, zero blocks at the end and the whole padded to tar's record
 * of 20 blocks.  The entries are what `tar -c -C DIR LINK TARGET...`
 * made: each .build-id link as a symlink, each cache directory with
 * everything under it (sorted by name; no hard links, a file linked
 * twice is stored twice).
 */
#define TAR_BLOCK 512
#define TAR_RECORD (20 * TAR_BLOCK)

struct tar {
	FILE *out;
	bz_stream bz;
	bool bz_ready;
	uint64_t in_bytes;	/* uncompressed bytes so far */
	int err;		/* first failure (-errno), said once */
	int rootfd;		/* the build-id directory */
	const char *dir;	/* its name, for messages */
	size_t skipped;		/* sockets: tar has no entry for them */
	char obuf[1 << 16];
};

static int tar_drain(struct tar *t)
{
	size_t n = sizeof(t->obuf) - t->bz.avail_out;

	if (n && fwrite(t->obuf, 1, n, t->out) != n)
		return -EIO;	/* the outfile keeps the errno */
	t->bz.next_out = t->obuf;
	t->bz.avail_out = sizeof(t->obuf);
	return 0;
}

static int tar_put(struct tar *t, const void *p, size_t n)
{
	t->in_bytes += n;
	while (n) {
		unsigned int k = n > (1u << 30) ? 1u << 30 : (unsigned int)n;

		t->bz.next_in = (char *)p;
		t->bz.avail_in = k;
		while (t->bz.avail_in) {
			if (BZ2_bzCompress(&t->bz, BZ_RUN) != BZ_RUN_OK)
				return -EIO;
			if (!t->bz.avail_out && tar_drain(t))
				return -EIO;
		}
		p = (const char *)p + k;
		n -= k;
	}
	return 0;
}

static int tar_zeros(struct tar *t, size_t n)
{
	static const char zero[TAR_BLOCK];
	int err = 0;

	while (n && !err) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		err = tar_put(t, zero, k);
		n -= k;
	}
	return err;
}

/* An octal field of w bytes (w - 1 digits and a NUL); false if v is too big. */
static bool tar_octal(char *f, size_t w, uint64_t v)
{
	size_t i = w - 1;

	f[i] = 0;
	while (i--) {
		f[i] = (char)('0' + (v & 7));
		v >>= 3;
	}
	return !v;
}

/* "LEN key=value\n" with LEN counting the whole record, itself included. */
static int pax_add(char **buf, size_t *len, const char *key, const char *val)
{
	size_t body = strlen(key) + strlen(val) + 3, n = body + 1, d;
	char *nb;

	for (;;) {	/* the length's own digits count */
		char tmp[24];

		d = (size_t)snprintf(tmp, sizeof(tmp), "%zu", n);
		if (body + d == n)
			break;
		n = body + d;
	}
	nb = realloc(*buf, *len + n + 1);
	if (!nb)
		return -ENOMEM;
	snprintf(nb + *len, n + 1, "%zu %s=%s\n", n, key, val);
	*buf = nb;
	*len += n;
	return 0;
}

static void tar_checksum(char *h)
{
	unsigned int sum = 0;
	size_t i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < TAR_BLOCK; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum & 0777777);	/* NUL at 154 */
	h[155] = ' ';
}

static void tar_owner(char *uname, char *gname, uid_t uid, gid_t gid)
{
	static uid_t last_uid = (uid_t)-1;
	static gid_t last_gid = (gid_t)-1;
	static char un[32], gn[32];
	struct passwd *pw;
	struct group *gr;

	if (uid != last_uid) {
		pw = getpwuid(uid);
		snprintf(un, sizeof(un), "%s",
			 pw && strlen(pw->pw_name) < 32 ? pw->pw_name : "");
		last_uid = uid;
	}
	if (gid != last_gid) {
		gr = getgrgid(gid);
		snprintf(gn, sizeof(gn), "%s",
			 gr && strlen(gr->gr_name) < 32 ? gr->gr_name : "");
		last_gid = gid;
	}
	memcpy(uname, un, 32);
	memcpy(gname, gn, 32);
}

/* Put name into the header's name (and prefix) fields; false: too long. */
static bool tar_name(char *h, const char *name)
{
	size_t n = strlen(name), i;

	if (n <= 100) {
		memcpy(h, name, n);
		return true;
	}
	/* prefix/name split at a slash: prefix <= 155, name 1..100 */
	for (i = n - 1; i > 0; i--) {
		if (name[i] != '/' || n - i - 1 > 100)
			continue;
		if (i > 155 || n - i - 1 == 0)
			continue;
		memcpy(h + 345, name, i);
		memcpy(h, name + i + 1, n - i - 1);
		return true;
	}
	return false;
}

/* One entry's header (and its pax header first when one is needed). */
static int tar_header(struct tar *t, const char *name, const struct stat *st,
		      char type, uint64_t size, const char *link)
{
	char h[TAR_BLOCK], num[32], *pax = NULL;
	size_t plen = 0;
	int err = 0;

	memset(h, 0, sizeof(h));
	if (!tar_name(h, name)) {
		err = pax_add(&pax, &plen, "path", name);
		memcpy(h, name, 100);	/* readers without pax: a prefix */
	}
	if (!err && link) {
		size_t ln = strlen(link);

		if (ln <= 100)
			memcpy(h + 157, link, ln);
		else
			err = pax_add(&pax, &plen, "linkpath", link);
	}
	tar_octal(h + 100, 8, st->st_mode & 07777);
	if (!err && !tar_octal(h + 108, 8, st->st_uid)) {
		snprintf(num, sizeof(num), "%u", (unsigned int)st->st_uid);
		err = pax_add(&pax, &plen, "uid", num);
		tar_octal(h + 108, 8, 0);
	}
	if (!err && !tar_octal(h + 116, 8, st->st_gid)) {
		snprintf(num, sizeof(num), "%u", (unsigned int)st->st_gid);
		err = pax_add(&pax, &plen, "gid", num);
		tar_octal(h + 116, 8, 0);
	}
	if (!err && !tar_octal(h + 124, 12, size)) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
		err = pax_add(&pax, &plen, "size", num);
		tar_octal(h + 124, 12, 0);
	}
	tar_octal(h + 136, 12, st->st_mtime > 0 ? (uint64_t)st->st_mtime : 0);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	tar_owner(h + 265, h + 297, st->st_uid, st->st_gid);
	if (type == '3' || type == '4') {
		tar_octal(h + 329, 8, major(st->st_rdev));
		tar_octal(h + 337, 8, minor(st->st_rdev));
	}
	tar_checksum(h);
	if (!err && pax) {
		char ph[TAR_BLOCK];
		struct stat pst = *st;

		memset(ph, 0, sizeof(ph));
		memcpy(ph, "././@PaxHeader", 14);
		pst.st_mode = 0644;
		tar_octal(ph + 100, 8, 0644);
		tar_octal(ph + 108, 8, 0);
		tar_octal(ph + 116, 8, 0);
		tar_octal(ph + 124, 12, plen);
		tar_octal(ph + 136, 12, pst.st_mtime > 0 ? (uint64_t)pst.st_mtime : 0);
		ph[156] = 'x';
		memcpy(ph + 257, "ustar", 6);
		memcpy(ph + 263, "00", 2);
		tar_checksum(ph);
		err = tar_put(t, ph, sizeof(ph));
		if (!err)
			err = tar_put(t, pax, plen);
		if (!err && plen % TAR_BLOCK)
			err = tar_zeros(t, TAR_BLOCK - plen % TAR_BLOCK);
	}
	free(pax);
	if (!err)
		err = tar_put(t, h, sizeof(h));
	return err;
}

/* Say a failure on the cache side once; keep the first. */
static int tar_fail(struct tar *t, const char *rel, int err, const char *what)
{
	if (!t->err) {
		t->err = err;
		cli_err("archive: %s/%s: %s", t->dir, rel,
			what ? what : strerror(-err));
	}
	return err;
}

/* A regular file's bytes: exactly st_size of them, as the header said. */
static int tar_file(struct tar *t, const char *rel, const struct stat *st)
{
	static char buf[1 << 16];
	uint64_t left = (uint64_t)st->st_size;
	struct stat fst;
	int fd, err;

	fd = openat(t->rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return tar_fail(t, rel, -errno, NULL);
	if (fstat(fd, &fst) || fst.st_ino != st->st_ino ||
	    fst.st_dev != st->st_dev) {
		close(fd);
		return tar_fail(t, rel, -ESTALE, "replaced while packed");
	}
	err = tar_header(t, rel, st, '0', left, NULL);
	while (!err && left) {
		ssize_t k = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = tar_fail(t, rel, -errno, NULL);
			break;
		}
		if (!k) {
			err = tar_fail(t, rel, -EIO, "shrank while packed");
			break;
		}
		err = tar_put(t, buf, (size_t)k);
		left -= (uint64_t)k;
	}
	close(fd);
	if (!err && st->st_size % TAR_BLOCK)
		err = tar_zeros(t, TAR_BLOCK - (size_t)(st->st_size % TAR_BLOCK));
	return err;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* rel (relative to the cache, no trailing slash) and all under it. */
static int tar_add(struct tar *t, char *rel, size_t cap, int depth)
{
	char link[PATH_MAX], **names = NULL;
	size_t nn = 0, i, rl = strlen(rel);
	struct dirent *de;
	struct stat st;
	ssize_t ln;
	DIR *d;
	int fd, err = 0;

	if (fstatat(t->rootfd, rel, &st, AT_SYMLINK_NOFOLLOW))
		return tar_fail(t, rel, -errno, NULL);
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		return tar_file(t, rel, &st);
	case S_IFLNK:
		ln = readlinkat(t->rootfd, rel, link, sizeof(link) - 1);
		if (ln < 0)
			return tar_fail(t, rel, -errno, NULL);
		link[ln] = 0;
		return tar_header(t, rel, &st, '2', 0, link);
	case S_IFCHR:
		return tar_header(t, rel, &st, '3', 0, NULL);
	case S_IFBLK:
		return tar_header(t, rel, &st, '4', 0, NULL);
	case S_IFIFO:
		return tar_header(t, rel, &st, '6', 0, NULL);
	case S_IFDIR:
		break;
	default:
		t->skipped++;
		return 0;
	}
	if (depth > 32)
		return tar_fail(t, rel, -ELOOP, "directories nested too deep");
	if (rl + 2 > cap)
		return tar_fail(t, rel, -ENAMETOOLONG, NULL);
	rel[rl] = '/';
	rel[rl + 1] = 0;
	err = tar_header(t, rel, &st, '5', 0, NULL);
	rel[rl] = 0;
	if (err)
		return err;
	fd = openat(t->rootfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		err = tar_fail(t, rel, -errno, NULL);
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((errno = 0, de = readdir(d))) {
		char **nv;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		nv = realloc(names, (nn + 1) * sizeof(*names));
		if (!nv || !(nv[nn] = strdup(de->d_name))) {
			names = nv ? nv : names;
			err = tar_fail(t, rel, -ENOMEM, NULL);
			break;
		}
		names = nv;
		nn++;
	}
	if (!err && errno)
		err = tar_fail(t, rel, -errno, NULL);
	closedir(d);
	if (!err && nn)
		qsort(names, nn, sizeof(*names), name_cmp);
	for (i = 0; i < nn; i++) {
		size_t l = strlen(names[i]);

		if (!err && rl + 1 + l + 1 > cap)
			err = tar_fail(t, rel, -ENAMETOOLONG, NULL);
		if (!err) {
			rel[rl] = '/';
			memcpy(rel + rl + 1, names[i], l + 1);
			err = tar_add(t, rel, cap, depth + 1);
			rel[rl] = 0;
		}
		free(names[i]);
	}
	free(names);
	return err;
}

/* The end: two zero blocks, padded to a whole record; then bzip2's end. */
static int tar_end(struct tar *t)
{
	uint64_t n = t->in_bytes + 2 * TAR_BLOCK;
	int err, r;

	n += (TAR_RECORD - n % TAR_RECORD) % TAR_RECORD;
	err = tar_zeros(t, (size_t)(n - t->in_bytes));
	if (err)
		return err;
	t->bz.next_in = NULL;
	t->bz.avail_in = 0;
	do {
		r = BZ2_bzCompress(&t->bz, BZ_FINISH);
		if (r != BZ_FINISH_OK && r != BZ_STREAM_END)
			return -EIO;
		if (tar_drain(t))
			return -EIO;
	} while (r != BZ_STREAM_END);
	return 0;
}

/*
 * Pack the list (pairs of names relative to dir, one a line) into out.
 * Return: 0 or -errno; *said: the failure (the cache side's) was said,
 * else it was writing, left to the output's own message.
 */
static int write_archive(FILE *out, const char *dir, char *const *names,
			 size_t nr, size_t *skipped, bool *said)
{
	struct tar *t;
	char rel[PATH_MAX];
	size_t i;
	int err = 0;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->out = out;
	t->dir = dir;
	*said = false;
	t->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->rootfd < 0) {
		err = -errno;
		cli_err("archive: %s: %s", dir, strerror(errno));
		*said = true;
		free(t);
		return err;
	}
	/* tar -j: bzip2 -9 */
	if (BZ2_bzCompressInit(&t->bz, 9, 0, 0) != BZ_OK) {
		err = -ENOMEM;
		goto out;
	}
	t->bz_ready = true;
	t->bz.next_out = t->obuf;
	t->bz.avail_out = sizeof(t->obuf);
	for (i = 0; i < nr && !err; i++) {
		if (strlen(names[i]) >= sizeof(rel)) {
			err = tar_fail(t, names[i], -ENAMETOOLONG, NULL);
			break;
		}
		memcpy(rel, names[i], strlen(names[i]) + 1);
		err = tar_add(t, rel, sizeof(rel), 0);
	}
	if (!err)
		err = tar_end(t);
	*skipped = t->skipped;
	*said = t->err != 0;
out:
	if (t->bz_ready)
		BZ2_bzCompressEnd(&t->bz);
	close(t->rootfd);
	free(t);
	return err;
}

int cmd_archive(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "buildid-dir", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "perf.data", *output = NULL, *bdir = NULL;
	const struct sfp_perf_header_info *h;
	struct sfp_perf_reader *rd = NULL;
	struct names names = { NULL, 0 };
	struct cli_out out;
	char dir[PATH_MAX];
	char *outbuf = NULL;
	size_t i, nr = 0, nr_debug = 0, missing = 0, skipped = 0;
	bool said = false;
	FILE *f;
	int c, err, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'B':
			bdir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_err("archive: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (bdir)
		sfp_buildid_set_dirs(bdir, NULL);
	if (sfp_buildid_dir(dir, sizeof(dir))) {
		cli_err("archive: no build-id directory (set HOME or give "
			"--buildid-dir)");
		return EXIT_USAGE;
	}
	if (!output) {
		if (asprintf(&outbuf, "%s.tar.bz2", input) < 0)
			return EXIT_USAGE;
		output = outbuf;
	}
	if (cli_out_is_input(output, input)) {
		ret = EXIT_USAGE;
		goto out;
	}
	err = sfp_perf_reader__open(input, NULL, &rd);
	if (err) {
		cli_err("%s: %s", input, sfp_strerror(err));
		ret = err == -EBADMSG ? EXIT_INVALID : EXIT_USAGE;
		goto out;
	}
	h = sfp_perf_reader__header(rd);
	for (i = 0; i < h->nr_build_ids; i++) {
		bool debug = false;

		err = add_entry(&names, dir, h->build_ids[i].id,
				h->build_ids[i].size, &debug);
		if (err == -ENOMEM) {
			cli_err("archive: out of memory");
			ret = EXIT_USAGE;
			goto out;
		}
		if (!err) {
			nr++;
			nr_debug += debug;
		} else {
			missing++;
		}
	}
	if (!nr) {
		cli_err("archive: none of the %zu build-ids of %s is in %s",
			h->nr_build_ids, input, dir);
		ret = EXIT_INVALID;
		goto out;
	}
	/* A write beyond `ulimit -f` fails with EFBIG and is said, instead
	 * of killing us half-way (the outfile is then removed, not left). */
	signal(SIGXFSZ, SIG_IGN);
	f = cli_out_open(&out, output);
	if (!f) {
		ret = EXIT_USAGE;
		goto out;
	}
	err = write_archive(f, dir, names.v, names.n, &skipped, &said);
	err = cli_out_finish(&out, err);
	if (err) {
		/* a failure writing the output is said by cli_out_finish(),
		 * one reading the cache by write_archive() */
		if (!out.io_failed && !said)
			cli_err("cannot write %s: %s", output, strerror(-err));
		ret = EXIT_USAGE;
		goto out;
	}
	fprintf(stderr, "sfprof archive: %zu DSOs from %s packed into %s",
		nr, dir, output);
	if (nr_debug)
		fprintf(stderr, ", %zu of them with their debug files", nr_debug);
	if (missing)
		fprintf(stderr, " (%zu named by the file are not in the cache)",
			missing);
	fprintf(stderr, "\nRead it elsewhere: tar xf %s -C DIR; "
		"sfprof report -i %s --symfs DIR\n", output, input);
	if (skipped)
		fprintf(stderr, "sfprof archive: %zu sockets in %s not packed "
			"(tar has no entry for them)\n", skipped, dir);
out:
	for (i = 0; i < names.n; i++)
		free(names.v[i]);
	free(names.v);
	sfp_perf_reader__free(&rd);
	free(outbuf);
	return ret;
}
