// SPDX-License-Identifier: MIT
/*
 * unwind-check built with -Wa,--gsframe: the program's own frames come
 * from the .sframe section the assembler emitted instead of a table built
 * from .eh_frame.
 */
#include "unwind-check.c"
