// Warp-level primitives: shuffles (up/down/xor/indexed), votes, ballots, match, lane masks, popc.
#include "check.h"

struct WarpResults {
  int shuffleSum;     // butterfly reduction of lane ids
  int downSum;        // shfl_down reduction
  int broadcast;      // value of lane 5
  int up;             // lane 7 reading lane 5 via shfl_up by 2
  unsigned ballot;    // odd lanes
  int any;
  int all;
  unsigned active;    // __activemask() in a divergent branch
  unsigned match;     // lanes with the same value (lane % 4 == 1)
  int popc;
  int reduceAdd;      // __reduce_add_sync where available, else the same by shuffles
};

__global__ void warpOps(WarpResults* out) {
  int lane = threadIdx.x & 31;
  int v = lane;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  int d = lane;
  for (int offset = 16; offset > 0; offset /= 2) d += __shfl_down_sync(0xFFFFFFFFu, d, offset);
  int b = __shfl_sync(0xFFFFFFFFu, lane * 10, 5);
  int u = __shfl_up_sync(0xFFFFFFFFu, lane, 2);
  unsigned ballot = __ballot_sync(0xFFFFFFFFu, lane & 1);
  int any = __any_sync(0xFFFFFFFFu, lane == 31);
  int all = __all_sync(0xFFFFFFFFu, lane < 31);
  unsigned active = 0;
  if (lane < 12) active = __activemask();
  unsigned match = __match_any_sync(0xFFFFFFFFu, lane % 4);
#if __CUDA_ARCH__ >= 800
  int reduced = __reduce_add_sync(0xFFFFFFFFu, lane);
#else
  int reduced = v;
#endif
  if (lane == 1) out->match = match;
  if (lane == 7) out->up = u;
  if (lane == 3) out->active = active;
  if (lane == 0) {
    out->shuffleSum = v;
    out->downSum = d;
    out->broadcast = b;
    out->ballot = ballot;
    out->any = any;
    out->all = all;
    out->popc = __popc(ballot);
    out->reduceAdd = reduced;
  }
}

int main() {
  CORPUS_PROGRAM("warp_intrinsics");
  WarpResults* d;
  CHECK_CUDA(cudaMalloc(&d, sizeof(WarpResults)));
  CHECK_CUDA(cudaMemset(d, 0, sizeof(WarpResults)));
  warpOps<<<1, 32>>>(d);
  WarpResults r;
  CHECK_CUDA(cudaMemcpy(&r, d, sizeof r, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT(r.shuffleSum, 496);
  EXPECT_EQ_INT(r.downSum, 496);
  EXPECT_EQ_INT(r.broadcast, 50);
  EXPECT_EQ_INT(r.up, 5);
  EXPECT_TRUE(r.ballot == 0xAAAAAAAAu);
  EXPECT_EQ_INT(r.any, 1);
  EXPECT_EQ_INT(r.all, 0);
  EXPECT_TRUE(r.active == 0x00000FFFu);
  EXPECT_TRUE(r.match == 0x22222222u);
  EXPECT_EQ_INT(r.popc, 16);
  EXPECT_EQ_INT(r.reduceAdd, 496);
  CHECK_CUDA(cudaFree(d));
  return corpus::pass();
}
