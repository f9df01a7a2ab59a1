// SPDX-License-Identifier: MIT
/*
 * The library path of the exports, without the CLI:
 *
 *   profile-export FORMAT IN.data OUT [TITLE]
 *
 * sfp_profile__load() then sfp_profile__export(); exit 0 on success.  The
 * browser tests use it for the speedscope file, so that they exercise the
 * writer through the public API whatever the `sfprof export` CLI does.
 */
#include <stdio.h>
#include <string.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

int main(int argc, char **argv)
{
	struct sfp_profile *p = NULL;
	FILE *out;
	int err;

	if (argc < 4) {
		fprintf(stderr, "usage: profile-export FORMAT IN.data OUT [TITLE]\n");
		return 2;
	}
	err = sfp_profile__load(argv[2], NULL, &p);
	if (err) {
		fprintf(stderr, "profile-export: %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	out = fopen(argv[3], "wb");
	if (!out) {
		perror(argv[3]);
		sfp_profile__free(&p);
		return 2;
	}
	{
		SFP_OPTS(sfp_export_opts, o, .title = argc > 4 ? argv[4] : NULL);

		err = sfp_profile__export(p, argv[1], out, &o);
	}
	if (fclose(out) && !err)
		err = -5;
	sfp_profile__free(&p);
	if (err) {
		fprintf(stderr, "profile-export: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	return 0;
}
