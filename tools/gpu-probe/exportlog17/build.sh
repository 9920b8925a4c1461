#!/bin/bash
# Builds the logging libcuda.so.1 into OUTDIR from the real library REAL (its dynamic symbols become forwarders).
# Usage: build.sh REAL_LIBCUDA OUTDIR
set -eu
real=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nm -D --defined-only "$real" | awk '$2 == "T" || $2 == "W" {print $3}' | sed 's/@.*//' | sort -u |
  grep -vxE 'cuGetExportTable|cuGetProcAddress|cuGetProcAddress_v2' > "$out/names.txt"
{
  echo '.section .rodata'
  i=0
  while read -r n; do echo ".Ln$i: .asciz \"$n\""; i=$((i + 1)); done < "$out/names.txt"
  echo '.section .data.rel.ro,"aw"'
  echo '.globl shim_names'
  echo 'shim_names:'
  for ((j = 0; j < i; j++)); do echo "  .quad .Ln$j"; done
  echo '.globl shim_name_count'
  echo "shim_name_count: .long $i"
  echo '.text'
  j=0
  while read -r n; do
    cat <<ASM
.globl $n
.type $n,@function
$n:
  push %rdi; push %rsi; push %rdx; push %rcx; push %r8; push %r9
  sub \$8, %rsp
  mov \$$j, %edi
  lea 8(%rsp), %rsi
  call shim_log_call@PLT
  add \$8, %rsp
  pop %r9; pop %r8; pop %rcx; pop %rdx; pop %rsi; pop %rdi
  mov shim_real@GOTPCREL(%rip), %r11
  jmp *$((8 * j))(%r11)
ASM
    j=$((j + 1))
  done < "$out/names.txt"
  echo '.section .note.GNU-stack,"",@progbits'
} > "$out/forwarders.s"
g++ -std=c++20 -O1 -fPIC -shared -o "$out/libcuda.so.1" "$here/shim.cpp" "$out/forwarders.s" -ldl -lpthread \
  -Wl,-soname,libcuda.so.1
ln -sf libcuda.so.1 "$out/libcuda.so"
