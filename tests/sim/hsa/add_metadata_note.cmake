# cmake -DGENERATOR=... -DOBJCOPY=... -DCODE_OBJECT=... -DNOTE=... -P add_metadata_note.cmake
#
# The post-build step of gtap_add_sim_hsa_code_object: sim_hsa_metadata writes
# the code object's NT_AMDGPU_METADATA note to NOTE, and objcopy adds it as the
# SHT_NOTE section .note.AMDGPU, 4-byte aligned as notes must be (objcopy
# aligns a section it adds only on a second pass). On failure the code object
# is removed, so that the next build links it again instead of keeping one
# without metadata.
foreach(var GENERATOR OBJCOPY CODE_OBJECT NOTE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "add_metadata_note.cmake: ${var} is not set")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    file(REMOVE "${CODE_OBJECT}")
    message(FATAL_ERROR "${what} failed (${result}); ${CODE_OBJECT} removed")
  endif()
endfunction()

run("writing the AMDGPU metadata note of ${CODE_OBJECT}" "${GENERATOR}" "${CODE_OBJECT}" "${NOTE}")
run("adding ${NOTE} to ${CODE_OBJECT}" "${OBJCOPY}" --add-section ".note.AMDGPU=${NOTE}"
    --set-section-flags .note.AMDGPU=readonly "${CODE_OBJECT}")
run("aligning .note.AMDGPU in ${CODE_OBJECT}" "${OBJCOPY}" --set-section-alignment .note.AMDGPU=4
    "${CODE_OBJECT}")
