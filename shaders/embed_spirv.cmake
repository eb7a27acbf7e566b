# cmake -DINPUT=x.spv -DOUTPUT=x.h -DSYMBOL=name -P embed_spirv.cmake
# Writes the SPIR-V words as a C++ array; SPIR-V is a stream of little-endian 32-bit words.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR remainder "${hex_length} % 8")
if(hex_length EQUAL 0 OR NOT remainder EQUAL 0)
  message(FATAL_ERROR "${INPUT}: not a SPIR-V module (size is not a whole number of words)")
endif()
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x........u,){8})" "\\1\n  " words "${words}")
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#pragma once\n#include <cstdint>\n\nstatic const uint32_t ${SYMBOL}[] = {\n  ${words}\n};\n")
