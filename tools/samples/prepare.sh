#!/usr/bin/env bash
# Prepares a copy of NVIDIA's CUDA samples (tag v13.0) for tools/samples/run-samples.sh:
#   tools/samples/prepare.sh CUDA_SAMPLES_CHECKOUT DEST
# The samples' own sources are not changed. Their CMake files are: every sample is built for compute capability
# 9.0 only (SASS sm_90 for the H100 and PTX compute_90, which cuemu's default profile runs) instead of nine
# architectures, and samples whose libraries a plain CUDA toolkit install lacks (NPP, nvJPEG, static cuFFT
# callbacks, libNVVM) or that need a display or another platform (Tegra) are left out.
set -eu
src=$(cd "$1" && pwd)
dest=$2
mkdir -p "$dest"
if git -C "$src" rev-parse --verify -q v13.0 >/dev/null; then
  git -C "$src" archive v13.0 | tar -x -C "$dest"
else
  cp -a "$src"/. "$dest"
fi
cd "$dest"
rm -rf Samples/8_Platform_Specific
find . -name doc -type d -prune -exec rm -rf {} +
grep -rl "CMAKE_CUDA_ARCHITECTURES" --include=CMakeLists.txt . |
  xargs sed -i -E 's/set\(CMAKE_CUDA_ARCHITECTURES [^)]*\)/set(CMAKE_CUDA_ARCHITECTURES 90)/'
sed -i -E 's/^(add_subdirectory\((nvJPEG|nvJPEG_encoder|simpleCUFFT_callback|[A-Za-z]*NPP)\))/#\1/' \
  Samples/4_CUDA_Libraries/CMakeLists.txt
sed -i 's/^add_subdirectory(7_libNVVM)/#&/; s/^if(BUILD_TEGRA)/if(FALSE)/' Samples/CMakeLists.txt
echo "prepared $dest: cmake -S $dest -B $dest/build -G Ninja -DCMAKE_CUDA_RUNTIME_LIBRARY=Shared -DCMAKE_BUILD_TYPE=Release"
