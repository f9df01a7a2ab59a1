/* SPDX-License-Identifier: MIT */
/*
 * The input of the fuzz targets that read perf.data (fuzz-perfdata,
 * fuzz-profile, fuzz-export, fuzz-flame): a first byte whose bits pick
 * reader and model options, then the file.  An input that already starts
 * like a perf.data file ('P' of "PERFILE2", or '2' of the byte-swapped
 * magic an opposite-endian file begins with) is taken whole, with every
 * option off, so that real files can sit in the corpus as they are.
 */
#ifndef SFP_FUZZ_PERFDATA_INPUT_H
#define SFP_FUZZ_PERFDATA_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* The mode bits; *@data and *@size are moved past the mode byte if any. */
static inline uint8_t perfdata_input(const uint8_t **data, size_t *size)
{
	uint8_t mode = (*data)[0];

	if (mode == 'P' || mode == '2')
		return 0;
	(*data)++;
	(*size)--;
	return mode;
}

#endif /* SFP_FUZZ_PERFDATA_INPUT_H */
