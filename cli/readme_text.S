/* The README, built into gtap: `gtap help TOPIC` and `gtap --agents_md` print
   its tables between <!-- help: TOPIC --> and <!-- /help -->, so the binary
   and the README say the same. */
  .section .rodata
  .global gtap_readme_start
  .global gtap_readme_end
gtap_readme_start:
  .incbin GTAP_README_PATH
gtap_readme_end:
  .byte 0
  .section .note.GNU-stack,"",@progbits
