"""CUDA C++ cross-entropy (forward): one pass over each row with an online log-sum-exp, then a mean.

G threads (a power of two, 32..THREADS; THREADS for vocabulary-sized rows) own one row. Each thread
issues ITEMS 16-byte loads at a time (lanes read consecutive vectors), takes the round's maximum, and
folds the round into its running (max m, sum s of exp(x - m)) in float32: one exponential per logit,
every byte read once. The group combines its threads' pairs (the row max, then each sum rescaled to it;
warp shuffles and shared memory, in a fixed order) into lse = max + log(sum), and one thread writes
lse - x[target] to a float32 row-loss buffer. A second one-block kernel adds the M row losses in a
fixed order and writes their mean, rounded once: deterministic, no atomics. Rows that are strided,
unaligned or not a whole number of vectors take a scalar kernel that reads the row twice. A target
outside [0, vocab) gives NaN rather than a read out of bounds.

Bytes: logits read once, int64 targets read once, one scalar written: M * V * esize + 8 * M + esize
(plus 4 bytes a row of row losses, written and read back).
"""

import functools
import hashlib

import torch.nn as nn
from torch.utils import cpp_extension

TUNABLES = {"THREADS": 512, "ITEMS": 4, "VEC_BYTES": 16}
# every combination compiles; VEC_BYTES 16 is one 128-bit load
TUNABLE_CHOICES = {"THREADS": [128, 256, 512, 1024], "ITEMS": [1, 2, 4, 8], "VEC_BYTES": [4, 8, 16]}

CPP_SOURCE = "at::Tensor cross_entropy_online_lse(at::Tensor logits, at::Tensor targets);"

CUDA_SOURCE = r"""
#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cstdint>

namespace {

constexpr int THREADS = Config::THREADS;
static_assert(THREADS >= 32 && THREADS <= 1024 && (THREADS & (THREADS - 1)) == 0, "THREADS: a power of two, 32..1024");
static_assert(Config::ITEMS >= 1 && Config::ITEMS <= 16, "ITEMS: 1..16");
static_assert(Config::VEC_BYTES == 4 || Config::VEC_BYTES == 8 || Config::VEC_BYTES == 16, "VEC_BYTES: 4, 8 or 16");

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// exp in float32: the fast intrinsic (a few ulp, far below a 16-bit result's rounding) for fp16 and
// bf16 logits, the accurate one for float32 logits.
template <typename T>
__device__ __forceinline__ float exp_of(float v) { return __expf(v); }
template <>
__device__ __forceinline__ float exp_of<float>(float v) { return expf(v); }

// Reduce over the aligned group of G threads (G a power of two, 32 <= G <= THREADS): warp shuffles,
// then the group's warps through shared memory. Every thread of the group gets the same value, combined
// in a fixed order (bitwise repeatable). G is uniform over the block, so every thread reaches the
// __syncthreads or none does.
template <typename Op>
__device__ __forceinline__ float group_reduce(float v, int G, float* smem, Op op) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  if (G == 32) return v;
  const int warp = threadIdx.x >> 5;
  __syncthreads();  // an earlier reduction may still be reading smem
  if ((threadIdx.x & 31) == 0) smem[warp] = v;
  __syncthreads();
  const int warps = G >> 5, first = warp & ~(warps - 1);
  float total = smem[first];
  for (int w = 1; w < warps; ++w) total = op(total, smem[first + w]);
  return total;
}

// lse - logits[target] of one row, written by the group's first thread.
template <typename T>
__device__ __forceinline__ void write_row_loss(const T* row, int64_t stride_v, int64_t V, int64_t target, float mx,
                                               float sum, float* loss) {
  *loss = (target >= 0 && target < V) ? mx + logf(sum) - static_cast<float>(row[target * stride_v]) : NAN;
}

// Row `row` of M, read by the G threads of its group: in each round thread `lane` loads vectors
// base + i * G (i < ITEMS), all loads first so they are in flight together. Rows past M (the last
// block's tail) load and store nothing but still take part in the block's reductions.
template <typename T>
__global__ void __launch_bounds__(THREADS)
row_loss_vec_kernel(const T* __restrict__ logits, const int64_t* __restrict__ targets, float* __restrict__ loss,
                    int64_t M, int V, int64_t stride_lm, int64_t stride_t, int G) {
  constexpr int VEC = Config::VEC_BYTES / sizeof(T);
  constexpr int ITEMS = Config::ITEMS;
  using P = Pack<T, VEC>;
  __shared__ float smem[THREADS / 32];
  const int lane = threadIdx.x & (G - 1);
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (THREADS / G) + threadIdx.x / G;
  const bool live = row < M;
  const int nvec = live ? V / VEC : 0;
  const T* lr = logits + (live ? row : 0) * stride_lm;
  const P* xr = reinterpret_cast<const P*>(lr);
  float m = -INFINITY, s = 0.f;  // this thread's running max and sum of exp(x - m)
  for (int base = lane; base < nvec; base += ITEMS * G) {
    P raw[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if (base + i * G < nvec) raw[i] = xr[base + i * G];
    }
    // Converted twice (for the max, then for the exponentials) rather than kept as floats: fewer
    // registers, so more warps per SM keep loads in flight.
    float round_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if (base + i * G < nvec) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) round_max = fmaxf(round_max, static_cast<float>(raw[i].v[j]));
      }
    }
    const float m_new = fmaxf(m, round_max);  // finite: the round's first vector (base) is in the row
    float round_sum = 0.f;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if (base + i * G < nvec) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) round_sum += exp_of<T>(static_cast<float>(raw[i].v[j]) - m_new);
      }
    }
    s = (m == -INFINITY ? 0.f : s * exp_of<T>(m - m_new)) + round_sum;
    m = m_new;
  }
  const float row_max = group_reduce(m, G, smem, MaxOp());
  const float part = m == -INFINITY ? 0.f : s * exp_of<T>(m - row_max);  // a thread with no logits adds 0
  const float row_sum = group_reduce(part, G, smem, SumOp());
  if (live && lane == 0) write_row_loss(lr, 1, V, targets[row * stride_t], row_max, row_sum, loss + row);
}

// Any strides, any length: one element at a time, the row read twice (max, then sum).
template <typename T>
__global__ void __launch_bounds__(THREADS)
row_loss_strided_kernel(const T* __restrict__ logits, const int64_t* __restrict__ targets, float* __restrict__ loss,
                        int64_t M, int64_t V, int64_t stride_lm, int64_t stride_lv, int64_t stride_t, int G) {
  __shared__ float smem[THREADS / 32];
  const int lane = threadIdx.x & (G - 1);
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (THREADS / G) + threadIdx.x / G;
  const bool live = row < M;
  const int64_t n = live ? V : 0;
  const T* lr = logits + (live ? row : 0) * stride_lm;
  float m = -INFINITY;
  for (int64_t c = lane; c < n; c += G) m = fmaxf(m, static_cast<float>(lr[c * stride_lv]));
  const float row_max = group_reduce(m, G, smem, MaxOp());
  float s = 0.f;
  for (int64_t c = lane; c < n; c += G) s += exp_of<T>(static_cast<float>(lr[c * stride_lv]) - row_max);
  const float row_sum = group_reduce(s, G, smem, SumOp());
  if (live && lane == 0) write_row_loss(lr, stride_lv, V, targets[row * stride_t], row_max, row_sum, loss + row);
}

// One block: the M row losses added in a fixed order (per thread, then the block's tree), / M. Eight
// loads a thread in flight at a time: one round trip to L2 per 8 * THREADS rows.
template <typename T>
__global__ void __launch_bounds__(THREADS)
mean_kernel(const float* __restrict__ loss, T* __restrict__ out, int64_t M) {
  constexpr int BATCH = 8;
  __shared__ float smem[THREADS / 32];
  float acc = 0.f;
  for (int64_t base = threadIdx.x; base < M; base += BATCH * THREADS) {
    float v[BATCH];
#pragma unroll
    for (int k = 0; k < BATCH; ++k) v[k] = base + k * THREADS < M ? loss[base + k * THREADS] : 0.f;
#pragma unroll
    for (int k = 0; k < BATCH; ++k) acc += v[k];
  }
  const float total = group_reduce(acc, THREADS, smem, SumOp());
  if (threadIdx.x == 0) *out = static_cast<T>(total / static_cast<float>(M));
}

// The smallest power of two G in [32, THREADS] with G * per_thread >= work.
int group_for(int64_t work, int per_thread) {
  int g = 32;
  while (g < THREADS && static_cast<int64_t>(g) * per_thread < work) g <<= 1;
  return g;
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % Config::VEC_BYTES == 0; }

template <typename T>
void launch(const at::Tensor& logits, const at::Tensor& targets, at::Tensor& loss, at::Tensor& out,
            cudaStream_t stream) {
  constexpr int VEC = Config::VEC_BYTES / sizeof(T);
  const int64_t M = logits.size(0), V = logits.size(1);
  const T* lp = logits.data_ptr<T>();
  const int64_t* tp = targets.data_ptr<int64_t>();
  float* rp = loss.data_ptr<float>();
  const bool vec = logits.stride(1) == 1 && V % VEC == 0 && logits.stride(0) % VEC == 0 && aligned(lp) &&
                   V <= static_cast<int64_t>(INT32_MAX);
  if (vec) {
    const int G = group_for(V / VEC, Config::ITEMS);
    const dim3 grid(static_cast<unsigned>((M + THREADS / G - 1) / (THREADS / G)));
    row_loss_vec_kernel<T><<<grid, THREADS, 0, stream>>>(lp, tp, rp, M, static_cast<int>(V), logits.stride(0),
                                                         targets.stride(0), G);
  } else {
    const int G = group_for(V, 4);
    const dim3 grid(static_cast<unsigned>((M + THREADS / G - 1) / (THREADS / G)));
    row_loss_strided_kernel<T><<<grid, THREADS, 0, stream>>>(lp, tp, rp, M, V, logits.stride(0), logits.stride(1),
                                                             targets.stride(0), G);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  mean_kernel<T><<<1, THREADS, 0, stream>>>(rp, out.data_ptr<T>(), M);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

at::Tensor cross_entropy_online_lse(at::Tensor logits, at::Tensor targets) {
  TORCH_CHECK(logits.is_cuda() && logits.dim() == 2, "logits must be a 2-D CUDA tensor [rows, vocab]");
  TORCH_CHECK(targets.is_cuda() && targets.dim() == 1 && targets.size(0) == logits.size(0) &&
                  targets.scalar_type() == at::kLong,
              "targets must be an int64 CUDA vector [rows]");
  TORCH_CHECK(logits.size(0) > 0 && logits.size(1) > 0, "cross-entropy needs at least one row and one class");
  const c10::cuda::CUDAGuard guard(logits.device());
  at::Tensor loss = at::empty({logits.size(0)}, logits.options().dtype(at::kFloat));
  at::Tensor out = at::empty({}, logits.options());
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  switch (logits.scalar_type()) {
    case at::kHalf: launch<at::Half>(logits, targets, loss, out, stream); break;
    case at::kBFloat16: launch<at::BFloat16>(logits, targets, loss, out, stream); break;
    case at::kFloat: launch<float>(logits, targets, loss, out, stream); break;
    default: TORCH_CHECK(false, "cross-entropy: float16, bfloat16 or float32 logits only, got ", logits.scalar_type());
  }
  return out;
}
"""


def config_source(tunables: dict, name: str = "Config") -> str:
    """TUNABLES as a struct of constexpr ints, the first thing in the CUDA source."""
    fields = "".join(f"  static constexpr int {key.upper()} = {int(value)};\n" for key, value in tunables.items())
    return f"struct {name} {{\n{fields}}};\n"


@functools.cache
def _extension():
    """Build once per process (or load the build cached under TORCH_EXTENSIONS_DIR); the name carries a
    hash of the source and TUNABLES, so every configuration gets its own build."""
    cuda_source = config_source(TUNABLES) + CUDA_SOURCE
    digest = hashlib.sha256((CPP_SOURCE + cuda_source).encode()).hexdigest()[:8]
    return cpp_extension.load_inline(
        name=f"ksuite_cross_entropy_online_lse_{digest}",
        cpp_sources=CPP_SOURCE,
        cuda_sources=cuda_source,
        functions=["cross_entropy_online_lse"],
        extra_cuda_cflags=["-O3"],
        verbose=False,
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _extension()

    def forward(self, logits, targets):
        return _extension().cross_entropy_online_lse(logits, targets)
