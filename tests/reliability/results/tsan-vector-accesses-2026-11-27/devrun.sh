#!/usr/bin/env bash
# Device run for issue 24 item 2 (helper ipc). Usage: devrun.sh STAGE   (run from the .helper-ipc root)
# stage 1: environment, gcc-13 asm of the 16-byte paths (old and new memory.h, plain and TSan), TSan build of the new code
# stage 2: finish the build, run the vector case with the new code, then the old header, rebuild, run again
set -u
stage=$1
OUTD=${OUT:-/tmp/out}; mkdir -p "$OUTD"
log=$OUTD/stage$stage.txt
exec > >(tee -a "$log") 2>&1
ROOT=$PWD
deps=/tmp/deps
if [ ! -d $deps/usr ]; then
  mkdir -p $deps /tmp/sanitize-bin
  for d in devdeps/*.deb; do dpkg -x "$d" "$deps"; done
  sed -i "s|^prefix=.*|prefix=$deps/usr|" "$deps"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
  printf '#!/bin/sh\nexec env LD_LIBRARY_PATH=%s/usr/lib/x86_64-linux-gnu %s/usr/bin/pkgconf "$@"\n' "$deps" "$deps" >/tmp/sanitize-bin/pkg-config
  chmod +x /tmp/sanitize-bin/*
fi
export PATH=/tmp/sanitize-bin:$PATH PKG_CONFIG=/tmp/sanitize-bin/pkg-config
export PKG_CONFIG_PATH=$deps/usr/lib/x86_64-linux-gnu/pkgconfig CMAKE_PREFIX_PATH=$deps/usr
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TSAN_OPTIONS="halt_on_error=0:exitcode=66:allocator_may_return_null=1:report_bugs=0"
BT=/tmp/bt
runcase() {  # label, times
  for i in $(seq 1 $2); do
    s=$SECONDS
    timeout 40 $BT/tests/reliability/cuemu-reliability-cases concurrency_vector_accesses_are_whole > /tmp/case.txt 2>&1
    rc=$?
    echo "$1 run $i rc=$rc ($((SECONDS-s)) s): $(grep -E 'WRONG|torn|half' /tmp/case.txt | head -2)"
  done
}
if [ "$stage" = 1 ]; then
  date; gcc --version | head -1; lscpu | grep -E 'Model name|^CPU\(s\)'; grep -o -w -E 'avx|avx2|avx512f' /proc/cpuinfo | sort | uniq -c
  cat /sys/kernel/mm/transparent_hugepage/shmem_enabled /sys/kernel/mm/transparent_hugepage/enabled
  # asm evidence, in the background
  ( rm -rf /tmp/oldsrc && cp -r ptx-interp/src /tmp/oldsrc && cp devold/memory.h /tmp/oldsrc/exec/memory.h
    for v in old new; do for san in plain tsan; do
      src=$ROOT/ptx-interp/src; [ $v = old ] && src=/tmp/oldsrc
      fl=""; [ $san = tsan ] && fl="-fsanitize=thread -fno-omit-frame-pointer -Wno-tsan"
      ( g++ -DFMT_HEADER_ONLY=1 -I$ROOT/ptx-interp/include -I$src -I$deps/usr/include -O2 -g -DNDEBUG -fPIC -fvisibility=hidden -std=c++20 $fl \
          -c $src/exec/isa/memory.cpp -o /tmp/mem_${v}_$san.o 2>/tmp/mem_${v}_$san.err
        objdump -d --no-show-raw-insn /tmp/mem_${v}_$san.o > /tmp/mem_${v}_$san.dis
        { for f in _ZN3ptx4exec3mem7ldLanesILNS1_5SpaceE0EmmmLi2EEE _ZN3ptx4exec3mem7ldLanesILNS1_5SpaceE0EmjjLi4EEE _ZN3ptx4exec3mem7stLanesILNS1_5SpaceE0EmmmLi2EEE _ZN3ptx4exec3mem7stLanesILNS1_5SpaceE0EmjjLi4EEE; do
            echo "== $v $san $f"; awk "/^[0-9a-f]+ <$f/,/^\$/" /tmp/mem_${v}_$san.dis | grep -E 'xmm|mov.*\(%r[a-z0-9]+\)|tsan_(read|write)'; done; } > $OUTD/asm_${v}_$san.txt ) &
    done; done; wait ) > /tmp/asm.log 2>&1 &
  cmake -S . -B $BT -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUEMU_SANITIZE=thread -DCUEMU_WERROR=OFF \
    -DCUEMU_RUNTIME_CORPUS=OFF -DCUEMU_PTX_FUZZER=OFF -DCUEMU_FUZZERS=OFF > /tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
  s=$SECONDS
  timeout 215 cmake --build $BT -j16 --target cuda cuemu-reliability-cases cuemu-reliability-run > /tmp/build.log 2>&1
  brc=$?
  echo "build rc=$brc after $((SECONDS-s)) s: $(tail -1 /tmp/build.log)"
  grep -m3 -E "error:|FAILED" /tmp/build.log
  wait
  ls $OUTD
  if [ $brc = 0 ]; then runcase new 2; fi
  date
fi
if [ "$stage" = 2 ]; then
  date
  ( g++ -DFMT_HEADER_ONLY=1 -I$ROOT/ptx-interp/include -I$ROOT/ptx-interp/src -O2 -g -DNDEBUG -fPIC -fvisibility=hidden -std=c++20 \
      -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan -c $ROOT/ptx-interp/src/exec/isa/memory.cpp -o /tmp/mem_new_tsan2.o 2>/tmp/mem_new_tsan2.err
    objdump -d --no-show-raw-insn /tmp/mem_new_tsan2.o > /tmp/mem_new_tsan2.dis
    for f in _ZN3ptx4exec3mem7ldLanesILNS1_5SpaceE0EmmmLi2EEE _ZN3ptx4exec3mem7stLanesILNS1_5SpaceE0EmjjLi4EEE; do
      echo "== new tsan $f"; awk "/^[0-9a-f]+ <$f/,/^\$/" /tmp/mem_new_tsan2.dis | grep -E 'xmm|tsan_(read|write)|call'; done > $OUTD/asm_new_tsan2.txt ) &
  asmpid=$!
  s=$SECONDS
  cmake --build $BT -j15 --target cuda cuemu-reliability-cases cuemu-reliability-run > /tmp/build2.log 2>&1
  echo "build rc=$? after $((SECONDS-s)) s: $(tail -1 /tmp/build2.log)"
  runcase new 2
  cp -r $BT/tests/reliability /tmp/rel-new; cp $BT/emu/libcuda.so.1 /tmp/rel-new/
  wait $asmpid
  cp devold/memory.h ptx-interp/src/exec/memory.h
  s=$SECONDS
  cmake --build $BT -j16 --target cuda cuemu-reliability-cases > /tmp/build3.log 2>&1
  echo "old-header build rc=$? after $((SECONDS-s)) s: $(tail -1 /tmp/build3.log)"
  runcase old 2
  date
  cp /tmp/rel-new/libcuda.so.1 $BT/emu/libcuda.so.1
  timeout 40 $BT/tests/reliability/cuemu-reliability-run /tmp/rel-new/cuemu-reliability-cases --jobs 15 --scale 4 concurrency_ > $OUTD/reliability-concurrency-tsan.txt 2>&1
  echo "concurrency subset (new library) rc=$?: $(tail -1 $OUTD/reliability-concurrency-tsan.txt)"
  date
fi
