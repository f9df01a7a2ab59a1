/* SPDX-License-Identifier: MIT */
/*
 * Hand-written functions with explicit CFI directives, for the gas
 * equivalence test (tests/unit/test-cfi-gas.c).  They are linked into the
 * corpus program but never called: only their CFI matters.
 */
	.text

	.globl	asm_fp_frame
	.type	asm_fp_frame, @function
asm_fp_frame:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	subq	$32, %rsp
	movq	%rdi, -8(%rbp)
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	asm_fp_frame, .-asm_fp_frame

	.globl	asm_remember
	.type	asm_remember, @function
asm_remember:
	.cfi_startproc
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	testq	%rdi, %rdi
	je	1f
	.cfi_remember_state
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
1:
	.cfi_restore_state
	xorl	%eax, %eax
	.cfi_remember_state
	popq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_restore %rbp
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state
	nop
	.cfi_endproc
	.size	asm_remember, .-asm_remember

	/* Same-value offsets repeated: gas starts a new FRE anyway. */
	.globl	asm_repeat
	.type	asm_repeat, @function
asm_repeat:
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 8
	nop
	.cfi_offset %rbp, -16
	nop
	.cfi_offset %rbp, -16
	nop
	.cfi_offset %rbx, -24
	nop
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	asm_repeat, .-asm_repeat

	/* Stack realignment with a DRAP register, as gcc does it. */
	.globl	asm_drap
	.type	asm_drap, @function
asm_drap:
	.cfi_startproc
	leaq	8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	andq	$-64, %rsp
	pushq	-8(%r10)
	pushq	%rbp
	movq	%rsp, %rbp
	.cfi_escape 0x10,0x6,0x2,0x76,0
	pushq	%r10
	.cfi_escape 0xf,0x3,0x76,0x78,0x6
	subq	$64, %rsp
	movq	-8(%rbp), %r10
	.cfi_def_cfa %r10, 0
	leave
	leaq	-8(%r10), %rsp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	asm_drap, .-asm_drap

	/* The return address kept in a register (like vfork). */
	.globl	asm_ra_in_reg
	.type	asm_ra_in_reg, @function
asm_ra_in_reg:
	.cfi_startproc
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %rdi
	nop
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rip, -8
	ret
	.cfi_endproc
	.size	asm_ra_in_reg, .-asm_ra_in_reg

	/* The outermost frame, like _start. */
	.globl	asm_outermost
	.type	asm_outermost, @function
asm_outermost:
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%ebp, %ebp
	movq	%rdx, %r9
	hlt
	.cfi_endproc
	.size	asm_outermost, .-asm_outermost

	/* CFA in a register that is neither SP nor FP. */
	.globl	asm_cfa_r11
	.type	asm_cfa_r11, @function
asm_cfa_r11:
	.cfi_startproc
	movq	%rsp, %r11
	.cfi_def_cfa_register %r11
	subq	$128, %rsp
	movq	%r11, %rsp
	.cfi_def_cfa_register %rsp
	ret
	.cfi_endproc
	.size	asm_cfa_r11, .-asm_cfa_r11

	/* Large CFA offsets: 2- and 4-byte FRE data words. */
	.globl	asm_large_frame
	.type	asm_large_frame, @function
asm_large_frame:
	.cfi_startproc
	subq	$1000, %rsp
	.cfi_def_cfa_offset 1008
	subq	$200000, %rsp
	.cfi_def_cfa_offset 201008
	pushq	%rbp
	.cfi_def_cfa_offset 201016
	.cfi_offset %rbp, -201016
	popq	%rbp
	.cfi_restore %rbp
	.cfi_def_cfa_offset 201008
	addq	$201000, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	asm_large_frame, .-asm_large_frame

	/* Long functions: 2- and 4-byte FRE start addresses. */
	.globl	asm_long
	.type	asm_long, @function
asm_long:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	.skip	300, 0x90
	popq	%rbp
	.cfi_def_cfa_offset 8
	.skip	300, 0x90
	ret
	.cfi_endproc
	.size	asm_long, .-asm_long

	.globl	asm_very_long
	.type	asm_very_long, @function
asm_very_long:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	.skip	70000, 0x90
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	asm_very_long, .-asm_very_long

	/* A signal trampoline's CFI shape (CFA from the saved context). */
	.globl	asm_sigtramp
	.type	asm_sigtramp, @function
	nop
asm_sigtramp:
	.cfi_startproc simple
	.cfi_signal_frame
	.cfi_escape 0xf,0x3,0x77,0xa0,0x1	/* CFA = *(rsp+160)... */
	movq	$15, %rax
	syscall
	.cfi_endproc
	.size	asm_sigtramp, .-asm_sigtramp

	/* val_offset, same_value and args_size. */
	.globl	asm_misc_rules
	.type	asm_misc_rules, @function
asm_misc_rules:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	.cfi_escape 0x2e, 0x10		/* DW_CFA_GNU_args_size 16 */
	nop
	.cfi_same_value %rbp
	nop
	.cfi_escape 0x2e, 0x0
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	asm_misc_rules, .-asm_misc_rules

	/* Frame pointer saved in another register (v3: flexible FDE). */
	.globl	asm_fp_in_reg
	.type	asm_fp_in_reg, @function
asm_fp_in_reg:
	.cfi_startproc
	movq	%rbp, %r12
	.cfi_register %rbp, %r12
	movq	%rsp, %rbp
	nop
	movq	%r12, %rbp
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	asm_fp_in_reg, .-asm_fp_in_reg

	.section .note.GNU-stack,"",@progbits
