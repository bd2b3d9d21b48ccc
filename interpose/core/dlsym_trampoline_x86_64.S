/* dlsym as seen by the program: ask gtap for a substitute (passing the
   caller's address), else tail-jump to the real dlsym with the caller's
   arguments and return address intact. */
    .text
    .globl  dlsym
    .type   dlsym, @function
dlsym:
    .cfi_startproc
    movq    (%rsp), %rdx            /* the caller's return address: who is asking */
    pushq   %rdi
    .cfi_adjust_cfa_offset 8
    pushq   %rsi
    .cfi_adjust_cfa_offset 8
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    call    gtap_dlsym_substitute
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %rsi
    .cfi_adjust_cfa_offset -8
    popq    %rdi
    .cfi_adjust_cfa_offset -8
    testq   %rax, %rax
    jnz     1f
    jmp     *gtap_real_dlsym(%rip)
1:
    ret
    .cfi_endproc
    .size   dlsym, .-dlsym
    .section .note.GNU-stack,"",@progbits
