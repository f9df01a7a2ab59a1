// SPDX-License-Identifier: MIT
/* `sfprof sframe build`: make an SFrame table from an ELF's DWARF CFI. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "cli.h"
#include "elf/elf.h"

static void build_usage(FILE *f)
{
	fprintf(f,
		"usage: sfprof sframe build [-o OUT.sframe] [--version N] [--stats]\n"
		"                           [--add-section OUT.elf] [--no-plt] ELF\n"
		"\n"
		"Build an SFrame section from the DWARF CFI of ELF (.eh_frame, else\n"
		".debug_frame, also from a separate debug file), the way GNU as\n"
		"--gsframe would have, plus ld-style PLT entries; and for the Go\n"
		"code of a Go binary, which has no CFI, from the SP deltas of Go's\n"
		"own function table (.gopclntab).\n"
		"\n"
		"  -o, --output FILE        write an sfprof table file (records the\n"
		"                           section address: `sfprof sframe dump FILE`\n"
		"                           prints functions at their ELF addresses)\n"
		"  -V, --version N          SFrame version 2 or 3 (default 3)\n"
		"  -s, --stats              print FDE counts, coverage and skip reasons\n"
		"  -A, --add-section FILE   write a copy of ELF with a .sframe section\n"
		"                           added (uses objcopy)\n"
		"      --no-plt             no PLT FDEs\n"
		"  -h, --help               this help\n"
		"\n"
		"Exit status: 0 ok; 1 no usable CFI, or some FDEs malformed (each is\n"
		"named with its section offset; the table of the rest is written);\n"
		"2 usage or I/O error.\n");
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_stats(const char *path, const struct sfp_build_stats *st)
{
	uint32_t skipped = 0;

	for (int i = 0; i < SFP_CFI_SKIP__COUNT; i++)
		skipped += st->skipped[i];
	printf("%s:\n", path);
	printf("  CFI source:     %s%s%s%s\n",
	       st->sources & SFP_CFI_SRC_EH_FRAME ? ".eh_frame " : "",
	       st->sources & SFP_CFI_SRC_DEBUG_FRAME ? ".debug_frame " : "",
	       st->sources & SFP_CFI_SRC_DEBUG_FILE ? "separate-debug-file " : "",
	       st->sources & SFP_CFI_SRC_GOPCLNTAB ? "Go-function-table" : "");
	printf("  FDEs:           %u\n", st->fdes);
	printf("  emitted:        %u (%.1f%%), of which flexible: %u\n",
	       st->emitted, pct(st->emitted, st->fdes), st->flex);
	printf("  PLT FDEs:       %u\n", st->plt_fdes);
	if (st->sources & SFP_CFI_SRC_GOPCLNTAB || st->go_left)
		printf("  Go FDEs:        %u from SP deltas; %u functions left to frame pointers\n",
		       st->go_fdes, st->go_left);
	printf("  FREs:           %u\n", st->rows);
	printf("  skipped:        %u\n", skipped);
	for (int i = 0; i < SFP_CFI_SKIP__COUNT; i++)
		if (st->skipped[i])
			printf("    %-18s %u\n", sfp_cfi_skip__str(i),
			       st->skipped[i]);
	printf("  text bytes:     %llu covered of %llu (%.1f%%)\n",
	       (unsigned long long)st->covered_bytes,
	       (unsigned long long)st->text_bytes,
	       pct(st->covered_bytes, st->text_bytes));
}

/*
 * objcopy adds the section as non-loaded data: the copy loads and runs
 * exactly as the original, and readers find .sframe at its address.
 * The section goes to a temporary file beside OUT, objcopy writes a
 * second one, and that takes OUT's name only when objcopy succeeded
 * (common/outfile.h: no symlink at OUT is followed, a failure leaves OUT
 * as it was).
 */
static int add_section(const char *elf, const char *out, const void *sec,
		       size_t size, uint64_t addr)
{
	struct sfp_outfile blob, dst;
	char addrarg[64];
	struct stat sb;
	FILE *f;
	pid_t pid;
	int st, err;

	if (stat(elf, &sb) < 0)
		return -errno;
	err = sfp_outfile_open(&blob, out, 0, 0600);
	if (err)
		return err;
	if (!blob.tmp) {	/* a device: objcopy cannot write one */
		sfp_outfile_abort(&blob);
		return -ENOTSUP;
	}
	f = sfp_outfile_stdio(&blob);
	if (!f || (size && fwrite(sec, 1, size, f) != size) || fflush(f)) {
		err = blob.werr ? blob.werr : -EIO;
		sfp_outfile_abort(&blob);
		return err;
	}
	err = sfp_outfile_open(&dst, out, 0, sb.st_mode & 0777);
	if (err) {
		sfp_outfile_abort(&blob);
		return err;
	}
	snprintf(addrarg, sizeof(addrarg), ".sframe=0x%llx",
		 (unsigned long long)addr);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail;
	}
	if (pid == 0) {
		char *arg;

		if (asprintf(&arg, ".sframe=%s", blob.tmp) < 0)
			_exit(127);
		execlp("objcopy", "objcopy", "--add-section", arg,
		       "--set-section-flags", ".sframe=contents,readonly",
		       "--change-section-address", addrarg, elf, dst.tmp,
		       (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			break;
	sfp_outfile_abort(&blob);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		sfp_outfile_abort(&dst);
		return -EIO;
	}
	return sfp_outfile_commit(&dst);
fail:
	sfp_outfile_abort(&blob);
	sfp_outfile_abort(&dst);
	return err;
}

/*
 * FDEs whose CFI could not be read are bad input even when the rest made
 * a table: the table is written (the good part is not lost) but the exit
 * status says the input was broken; the parser named each place.
 */
static int malformed_exit(const char *elf, const struct sfp_build_stats *st)
{
	uint32_t n = st->skipped[SFP_CFI_SKIP_BAD_CFI];

	if (!n)
		return 0;
	cli_err("%s: %u FDE%s of its CFI %s malformed and left out of the table",
		elf, n, n == 1 ? "" : "s", n == 1 ? "is" : "are");
	return EXIT_INVALID;
}

/* The table file records the section address and the ELF's build-id. */
static int write_table(const char *elf, const char *out, const void *sec,
		       size_t size, uint64_t addr)
{
	SFP_OPTS(sfp_sframe_file_opts, fo, .section_addr = addr);
	struct sfp_elf *e = NULL;
	const uint8_t *id;
	size_t idlen;
	int err;

	if (!sfp_elf_open(elf, &e) && !sfp_elf_build_id(e, &id, &idlen) &&
	    idlen <= 64) {
		fo.build_id = id;
		fo.build_id_len = idlen;
	}
	err = sfp_sframe__write_file(out, sec, size, &fo);
	sfp_elf_close(&e);
	return err;
}

/* Invalid or unsupported input: 1; resources and I/O: 2. */
static int build_exit(int err)
{
	return err == -ENOENT || err == -EBADMSG || err == -EOPNOTSUPP
		       ? EXIT_INVALID
		       : EXIT_USAGE;
}

int cmd_sframe_build(int argc, char **argv)
{
	enum { OPT_NO_PLT = 256 };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "version", required_argument, NULL, 'V' },
		{ "stats", no_argument, NULL, 's' },
		{ "add-section", required_argument, NULL, 'A' },
		{ "no-plt", no_argument, NULL, OPT_NO_PLT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	SFP_OPTS(sfp_build_opts, opts, .go_pclntab = true);
	struct sfp_build_stats st = { .sz = sizeof(st) };
	const char *out = NULL, *add = NULL, *elf;
	bool stats = false;
	void *sec = NULL;
	size_t size = 0;
	uint64_t addr = 0, v;
	int c, err, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:V:sA:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'V':
			if (!cli_parse_u64(optarg, &v) || (v != 2 && v != 3)) {
				cli_err("--version must be 2 or 3");
				return EXIT_USAGE;
			}
			opts.version = (uint8_t)v;
			break;
		case 's':
			stats = true;
			break;
		case 'A':
			add = optarg;
			break;
		case OPT_NO_PLT:
			opts.no_plt = true;
			break;
		case 'h':
			build_usage(stdout);
			return 0;
		default:
			build_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		build_usage(stderr);
		return EXIT_USAGE;
	}
	elf = argv[optind];
	/* (--add-section ELF ELF is fine: the copy replaces it whole) */
	if (out && cli_out_is_input(out, elf))
		return EXIT_USAGE;
	if (access(elf, R_OK)) {
		cli_err("%s: %s", elf, strerror(errno));
		return EXIT_USAGE;
	}
	/* Build once in memory, then write: a problem with the ELF names
	 * the ELF, one with the output names the output. */
	err = sfp_sframe__build_from_elf(elf, &opts, &sec, &size, &addr, &st);
	if (stats)
		print_stats(elf, &st);
	if (err) {
		cli_err("%s: %s", elf, sfp_strerror(err));
		return build_exit(err);
	}
	if (out) {
		err = write_table(elf, out, sec, size, addr);
		if (err) {
			cli_err("cannot write %s: %s", out, strerror(-err));
			rc = EXIT_USAGE;
		}
	}
	if (add && !rc) {
		err = add_section(elf, add, sec, size, addr);
		if (err) {
			cli_err("%s: %s", add, err == -EIO ?
				"objcopy failed" : strerror(-err));
			rc = EXIT_USAGE;
		}
	}
	if (!out && !add && !stats)
		printf("%s: %zu bytes of SFrame at 0x%llx\n", elf, size,
		       (unsigned long long)addr);
	free(sec);
	if (!rc)
		rc = malformed_exit(elf, &st);
	return rc;
}
