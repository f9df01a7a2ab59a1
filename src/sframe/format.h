/* SPDX-License-Identifier: MIT */
/*
 * SFrame on-disk format: constants, sizes and bit fields of versions 1, 2
 * and 3 (see /work/shared/docs/sframe-format.md §1 for the sources).
 *
 * Only the layout lives here; reading goes through src/common/cursor.h.
 * Shared by the decoder (decode.c) and the encoder (encode.c).
 */
#ifndef SFP_SFRAME_FORMAT_H
#define SFP_SFRAME_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

/* --- Preamble and header (same in every version). --- */

#define SFRAME_MAGIC 0xdee2
#define SFRAME_MAGIC_SWAPPED 0xe2de	/* the section is in the other byte order */

#define SFRAME_VERSION_1 1
#define SFRAME_VERSION_2 2
#define SFRAME_VERSION_3 3

#define SFRAME_F_FDE_SORTED 0x1
#define SFRAME_F_FRAME_POINTER 0x2		/* v1/v2 only */
#define SFRAME_F_FDE_FUNC_START_PCREL 0x4	/* v2 errata 1, v3 */

/* Flags each version accepts; anything else makes the header invalid. */
#define SFRAME_V1_F_ALL (SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER)
#define SFRAME_V2_F_ALL (SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER | \
			 SFRAME_F_FDE_FUNC_START_PCREL)
#define SFRAME_V3_F_ALL (SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL)

#define SFRAME_ABI_AARCH64_ENDIAN_BIG 1
#define SFRAME_ABI_AARCH64_ENDIAN_LITTLE 2
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE 3
#define SFRAME_ABI_S390X_ENDIAN_BIG 4

/* Header field offsets (bytes from the section start). */
#define SFRAME_HDR_OFF_MAGIC 0x00	/* u16 */
#define SFRAME_HDR_OFF_VERSION 0x02	/* u8 */
#define SFRAME_HDR_OFF_FLAGS 0x03	/* u8 */
#define SFRAME_HDR_OFF_ABI 0x04		/* u8 */
#define SFRAME_HDR_OFF_FIXED_FP 0x05	/* i8 */
#define SFRAME_HDR_OFF_FIXED_RA 0x06	/* i8 */
#define SFRAME_HDR_OFF_AUXHDR_LEN 0x07	/* u8 */
#define SFRAME_HDR_OFF_NUM_FDES 0x08	/* u32 */
#define SFRAME_HDR_OFF_NUM_FRES 0x0c	/* u32 */
#define SFRAME_HDR_OFF_FRE_LEN 0x10	/* u32 */
#define SFRAME_HDR_OFF_FDEOFF 0x14	/* u32, from the end of the header+aux */
#define SFRAME_HDR_OFF_FREOFF 0x18	/* u32, from the end of the header+aux */
#define SFRAME_HDR_SIZE 28		/* without the aux header */

/* --- FDEs. --- */

/* v1: i32 start, u32 size, u32 start_fre_off, u32 num_fres, u8 info. */
#define SFRAME_V1_FDE_SIZE 17
/* v2: v1 + u8 rep_size + u16 padding. */
#define SFRAME_V2_FDE_SIZE 20
/* v3 index entry: i64 start (PC-relative), u32 size, u32 start_fre_off. */
#define SFRAME_V3_FDE_SIZE 16
/* v3 attribute record at start_fre_off in the FRE sub-section:
 * u16 num_fres, u8 info, u8 info2, u8 rep_size. */
#define SFRAME_V3_FDE_ATTR_SIZE 5
#define SFRAME_V3_MAX_FUNC_FRES 0xffff

/* Field offsets inside an FDE (v1/v2) or a v3 index entry. */
#define SFRAME_FDE_OFF_START 0x00
#define SFRAME_FDE_OFF_SIZE_V12 0x04
#define SFRAME_FDE_OFF_FRE_OFF_V12 0x08
#define SFRAME_FDE_OFF_NUM_FRES_V12 0x0c
#define SFRAME_FDE_OFF_INFO_V12 0x10
#define SFRAME_FDE_OFF_REP_SIZE_V2 0x11
#define SFRAME_FDE_OFF_SIZE_V3 0x08
#define SFRAME_FDE_OFF_FRE_OFF_V3 0x0c

static inline unsigned int sframe_fde_size(unsigned int version)
{
	switch (version) {
	case SFRAME_VERSION_1: return SFRAME_V1_FDE_SIZE;
	case SFRAME_VERSION_2: return SFRAME_V2_FDE_SIZE;
	case SFRAME_VERSION_3: return SFRAME_V3_FDE_SIZE;
	default: return 0;
	}
}

/* Function info byte (v1/v2 FDE; v3 attribute record "info"). */
#define SFRAME_FUNC_INFO_FRE_TYPE_MASK 0x0f	/* bits 0-3 */
#define SFRAME_FUNC_INFO_PC_TYPE_SHIFT 4	/* bit 4: 0 PCINC, 1 PCMASK */
#define SFRAME_FUNC_INFO_PAUTH_SHIFT 5		/* bit 5: 0 key A, 1 key B */
#define SFRAME_FUNC_INFO_SIGNAL_SHIFT 7		/* bit 7: v3 signal frame */
#define SFRAME_V12_FUNC_INFO_ALL 0x3f		/* bits 6-7 unused in v1/v2 */
#define SFRAME_V3_FUNC_INFO_ALL 0xbf		/* bit 6 unused in v3 */

#define SFRAME_FUNC_INFO(fre_type, pc_type, pauth, signal)                  \
	((uint8_t)(((fre_type) & 0xf) | (((pc_type) & 1) << 4) |            \
		   (((pauth) & 1) << 5) | (((signal) & 1) << 7)))

static inline unsigned int sframe_func_info_fre_type(uint8_t info)
{
	return info & SFRAME_FUNC_INFO_FRE_TYPE_MASK;
}

static inline unsigned int sframe_func_info_pc_type(uint8_t info)
{
	return (info >> SFRAME_FUNC_INFO_PC_TYPE_SHIFT) & 1;
}

static inline unsigned int sframe_func_info_pauth_key(uint8_t info)
{
	return (info >> SFRAME_FUNC_INFO_PAUTH_SHIFT) & 1;
}

static inline bool sframe_func_info_signal(uint8_t info)
{
	return (info >> SFRAME_FUNC_INFO_SIGNAL_SHIFT) & 1;
}

/* v3 info2: bits 0-4 FDE type, bits 5-7 unused. */
#define SFRAME_FUNC_INFO2_FDE_TYPE_MASK 0x1f
#define SFRAME_FDE_TYPE_DEFAULT 0
#define SFRAME_FDE_TYPE_FLEX 1

/* PC types (bit 4 of the info byte; "FDE type" in v1/v2 naming). */
#define SFRAME_PC_TYPE_INC 0
#define SFRAME_PC_TYPE_MASK 1

/* v1 PCMASK has no rep_size: libsframe 2.40 compared the low 8 bits. */
#define SFRAME_V1_PCMASK_MASK 0xff

/* FRE types: the size of an FRE's start offset. */
#define SFRAME_FRE_TYPE_ADDR1 0
#define SFRAME_FRE_TYPE_ADDR2 1
#define SFRAME_FRE_TYPE_ADDR4 2

static inline unsigned int sframe_fre_addr_size(unsigned int fre_type)
{
	switch (fre_type) {
	case SFRAME_FRE_TYPE_ADDR1: return 1;
	case SFRAME_FRE_TYPE_ADDR2: return 2;
	case SFRAME_FRE_TYPE_ADDR4: return 4;
	default: return 0;	/* invalid */
	}
}

/* --- FREs: [start: 1/2/4][fre_info: u8][N words of 1/2/4 bytes]. --- */

#define SFRAME_FRE_INFO_BASE_REG_MASK 0x01	/* bit 0: 0 FP, 1 SP */
#define SFRAME_FRE_INFO_COUNT_SHIFT 1		/* bits 1-4: word count */
#define SFRAME_FRE_INFO_COUNT_MASK 0x0f
#define SFRAME_FRE_INFO_SIZE_SHIFT 5		/* bits 5-6: word size code */
#define SFRAME_FRE_INFO_SIZE_MASK 0x03
#define SFRAME_FRE_INFO_MANGLED_RA_SHIFT 7	/* bit 7: AArch64 PAC */

#define SFRAME_BASE_REG_FP 0
#define SFRAME_BASE_REG_SP 1

#define SFRAME_FRE_OFFSET_1B 0
#define SFRAME_FRE_OFFSET_2B 1
#define SFRAME_FRE_OFFSET_4B 2	/* 3 is invalid */

#define SFRAME_FRE_MAX_WORDS_DEFAULT 3
#define SFRAME_FRE_MAX_WORDS_FLEX 6

#define SFRAME_FRE_INFO(base_sp, count, size_code, mangled)                 \
	((uint8_t)(((base_sp) & 1) | (((count) & 0xf) << 1) |                \
		   (((size_code) & 3) << 5) | (((mangled) & 1) << 7)))

static inline unsigned int sframe_fre_info_base_reg(uint8_t fi)
{
	return fi & SFRAME_FRE_INFO_BASE_REG_MASK;
}

static inline unsigned int sframe_fre_info_count(uint8_t fi)
{
	return (fi >> SFRAME_FRE_INFO_COUNT_SHIFT) & SFRAME_FRE_INFO_COUNT_MASK;
}

static inline unsigned int sframe_fre_info_size_code(uint8_t fi)
{
	return (fi >> SFRAME_FRE_INFO_SIZE_SHIFT) & SFRAME_FRE_INFO_SIZE_MASK;
}

static inline bool sframe_fre_info_mangled_ra(uint8_t fi)
{
	return (fi >> SFRAME_FRE_INFO_MANGLED_RA_SHIFT) & 1;
}

/* Bytes of one data word for a size code; 0 for the invalid code 3. */
static inline unsigned int sframe_fre_word_size(unsigned int size_code)
{
	switch (size_code) {
	case SFRAME_FRE_OFFSET_1B: return 1;
	case SFRAME_FRE_OFFSET_2B: return 2;
	case SFRAME_FRE_OFFSET_4B: return 4;
	default: return 0;
	}
}

/* v3 "RA undefined" (outermost frame) FRE: no words, fre_info == 0. */
#define SFRAME_FRE_INFO_RA_UNDEFINED 0x00

/* Default-FDE word indices (FP moves to word 1 when RA is fixed). */
#define SFRAME_FRE_CFA_WORD 0
#define SFRAME_FRE_RA_WORD 1
#define SFRAME_FRE_FP_WORD 2

/* --- v3 flexible FDEs: (control word, offset word) pairs. --- */

#define SFRAME_FLEX_CTRL_REG_P 0x1	/* base is DWARF reg, else the CFA */
#define SFRAME_FLEX_CTRL_DEREF_P 0x2	/* value = *(base + off) */
#define SFRAME_FLEX_CTRL_RESERVED 0x4	/* must be 0 */
#define SFRAME_FLEX_CTRL_REG_SHIFT 3	/* bits 3.. regnum */

#define SFRAME_FLEX_CTRL(reg, deref_p, reg_p)                               \
	(((uint32_t)(reg) << SFRAME_FLEX_CTRL_REG_SHIFT) |                   \
	 ((deref_p) ? SFRAME_FLEX_CTRL_DEREF_P : 0) |                        \
	 ((reg_p) ? SFRAME_FLEX_CTRL_REG_P : 0))

static inline unsigned int sframe_flex_ctrl_reg(uint32_t w)
{
	return w >> SFRAME_FLEX_CTRL_REG_SHIFT;
}

/* Flex word positions, as libsframe reads them. */
#define SFRAME_FLEX_CFA_CTRL 0
#define SFRAME_FLEX_CFA_OFF 1
#define SFRAME_FLEX_RA_CTRL 2	/* or a 0 padding word: RA has no rule */
#define SFRAME_FLEX_RA_OFF 3

/* --- s390x. --- */

#define SFRAME_S390X_SP_VAL_OFFSET (-160)	/* SP_next = CFA - 160 */
#define SFRAME_S390X_CFA_OFFSET_ADJ 160
#define SFRAME_S390X_CFA_OFFSET_ALIGN 8
/* Stored CFA word = (off - 160) / 8; decoded = w * 8 + 160. */
static inline int64_t sframe_s390x_cfa_decode(int64_t w)
{
	return w * SFRAME_S390X_CFA_OFFSET_ALIGN + SFRAME_S390X_CFA_OFFSET_ADJ;
}

static inline int64_t sframe_s390x_cfa_encode(int64_t off)
{
	return (off - SFRAME_S390X_CFA_OFFSET_ADJ) /
	       SFRAME_S390X_CFA_OFFSET_ALIGN;
}

/* s390x RA word 0: padding, "RA not saved". */
#define SFRAME_FRE_RA_OFFSET_INVALID 0
/* v2 s390x: a word with the LSB set holds a DWARF regnum (w >> 1). */
static inline bool sframe_v2_s390x_offset_is_regnum(int64_t w)
{
	return (w & 1) != 0;
}

static inline unsigned int sframe_v2_s390x_offset_regnum(int64_t w)
{
	return (unsigned int)((uint64_t)w >> 1) & 0x7fffffff;
}

static inline int64_t sframe_v2_s390x_regnum_encode(unsigned int reg)
{
	return ((int64_t)reg << 1) | 1;
}

/* --- ABI defaults. --- */

#define SFRAME_AMD64_FIXED_RA_OFFSET (-8)

#endif /* SFP_SFRAME_FORMAT_H */
