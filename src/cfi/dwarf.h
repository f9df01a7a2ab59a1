/* SPDX-License-Identifier: MIT */
/*
 * DWARF call-frame constants (DWARF 5 §6.4, LSB "Exception Frames", GNU
 * extensions).  Numeric values are fixed by the formats.
 */
#ifndef SFP_CFI_DWARF_H
#define SFP_CFI_DWARF_H

/* Pointer encodings (.eh_frame, .eh_frame_hdr). */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_signed 0x08
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_textrel 0x20
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_funcrel 0x40
#define DW_EH_PE_aligned 0x50
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit 0xff

/* Call frame instructions: high two bits carry an operand. */
#define DW_CFA_advance_loc 0x40
#define DW_CFA_offset 0x80
#define DW_CFA_restore 0xc0

#define DW_CFA_nop 0x00
#define DW_CFA_set_loc 0x01
#define DW_CFA_advance_loc1 0x02
#define DW_CFA_advance_loc2 0x03
#define DW_CFA_advance_loc4 0x04
#define DW_CFA_offset_extended 0x05
#define DW_CFA_restore_extended 0x06
#define DW_CFA_undefined 0x07
#define DW_CFA_same_value 0x08
#define DW_CFA_register 0x09
#define DW_CFA_remember_state 0x0a
#define DW_CFA_restore_state 0x0b
#define DW_CFA_def_cfa 0x0c
#define DW_CFA_def_cfa_register 0x0d
#define DW_CFA_def_cfa_offset 0x0e
#define DW_CFA_def_cfa_expression 0x0f
#define DW_CFA_expression 0x10
#define DW_CFA_offset_extended_sf 0x11
#define DW_CFA_def_cfa_sf 0x12
#define DW_CFA_def_cfa_offset_sf 0x13
#define DW_CFA_val_offset 0x14
#define DW_CFA_val_offset_sf 0x15
#define DW_CFA_val_expression 0x16
#define DW_CFA_MIPS_advance_loc8 0x1d
#define DW_CFA_AARCH64_negate_ra_state_with_pc 0x2c
#define DW_CFA_GNU_window_save 0x2d	/* AArch64: negate_ra_state */
#define DW_CFA_GNU_args_size 0x2e
#define DW_CFA_GNU_negative_offset_extended 0x2f

/* The few DWARF expression operators the converter recognises. */
#define DW_OP_deref 0x06
#define DW_OP_const1u 0x08
#define DW_OP_plus_uconst 0x23
#define DW_OP_breg0 0x70
#define DW_OP_breg31 0x8f
#define DW_OP_bregx 0x92
#define DW_OP_nop 0x96

#endif /* SFP_CFI_DWARF_H */
