"""CUDA C++ rotary embedding (rotate-half): 128-bit loads, each cos/sin vector reused over HEADS heads.

A thread owns VEC (16 bytes: eight fp16/bf16) columns of the first half of a row and the matching
columns of the second half, at one (batch, position), for HEADS consecutive heads: it loads the four
cos/sin vectors (both halves) once, then for every head loads x1 and x2, writes
out1 = x1 * cos1 - x2 * sin1 and out2 = x2 * cos2 + x1 * sin2 in float32, each rounded once. Consecutive
threads take consecutive vectors of a row, then the next position, so a warp reads and writes whole
128-byte lines. Tensors whose last dimension is strided, rows not aligned to the vector, or a half not
a whole number of vectors take a scalar kernel.

Bytes: x read once and out written once (2 * B * H * S * D elements); cos and sin read once per HEADS
heads, mostly from L2, so DRAM sees them about once (2 * S * D elements).
"""

import functools
import hashlib

import torch.nn as nn
from torch.utils import cpp_extension

TUNABLES = {"THREADS": 256, "HEADS": 4, "VEC_BYTES": 16}
# every combination compiles; VEC_BYTES 16 is one 128-bit load
TUNABLE_CHOICES = {"THREADS": [64, 128, 256, 512, 1024], "HEADS": [1, 2, 4, 8, 16], "VEC_BYTES": [4, 8, 16]}

CPP_SOURCE = "at::Tensor rotary_head_reuse(at::Tensor x, at::Tensor cos, at::Tensor sin);"

CUDA_SOURCE = r"""
#include <ATen/ATen.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cstdint>

namespace {

constexpr int THREADS = Config::THREADS;
constexpr int HEADS = Config::HEADS;
static_assert(THREADS >= 32 && THREADS <= 1024 && THREADS % 32 == 0, "THREADS: a multiple of 32, 32..1024");
static_assert(HEADS >= 1 && HEADS <= 32, "HEADS: 1..32");
static_assert(Config::VEC_BYTES == 4 || Config::VEC_BYTES == 8 || Config::VEC_BYTES == 16, "VEC_BYTES: 4, 8 or 16");

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename T, int N>
__device__ __forceinline__ void to_float(const Pack<T, N>& p, float (&f)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) f[j] = static_cast<float>(p.v[j]);
}

// Thread t: vector j of the first half, position s, heads h0 .. h0 + HEADS - 1 of batch b, where
// t = ((b * head_groups + h0 / HEADS) * S + s) * (half / VEC) + j. out is a new contiguous [B, H, S, D].
template <typename T>
__global__ void __launch_bounds__(THREADS)
rotary_vec_kernel(const T* __restrict__ x, const T* __restrict__ cosp, const T* __restrict__ sinp,
                  T* __restrict__ out, int H, int S, int half, int64_t stride_xb, int64_t stride_xh,
                  int64_t stride_xs, int64_t stride_cs, int64_t stride_ss, int64_t total) {
  constexpr int VEC = Config::VEC_BYTES / sizeof(T);
  using P = Pack<T, VEC>;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * THREADS + threadIdx.x;
  if (t >= total) return;  // no block-wide synchronisation below
  const int nvh = half / VEC;
  const int head_groups = (H + HEADS - 1) / HEADS;
  const int d = static_cast<int>(t % nvh) * VEC;
  int64_t r = t / nvh;
  const int s = static_cast<int>(r % S);
  r /= S;
  const int h0 = static_cast<int>(r % head_groups) * HEADS;
  const int64_t b = r / head_groups;

  float c1[VEC], c2[VEC], s1[VEC], s2[VEC];
  to_float(*reinterpret_cast<const P*>(cosp + s * stride_cs + d), c1);
  to_float(*reinterpret_cast<const P*>(cosp + s * stride_cs + half + d), c2);
  to_float(*reinterpret_cast<const P*>(sinp + s * stride_ss + d), s1);
  to_float(*reinterpret_cast<const P*>(sinp + s * stride_ss + half + d), s2);

  const T* xs = x + b * stride_xb + s * stride_xs + d;
  P lo[HEADS], hi[HEADS];
#pragma unroll
  for (int k = 0; k < HEADS; ++k) {
    if (h0 + k < H) {
      lo[k] = *reinterpret_cast<const P*>(xs + (h0 + k) * stride_xh);
      hi[k] = *reinterpret_cast<const P*>(xs + (h0 + k) * stride_xh + half);
    }
  }
  const int64_t row_len = 2 * static_cast<int64_t>(half);
  T* os = out + ((b * H + h0) * S + s) * row_len + d;
#pragma unroll
  for (int k = 0; k < HEADS; ++k) {
    if (h0 + k < H) {
      P o1, o2;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        const float x1 = static_cast<float>(lo[k].v[j]), x2 = static_cast<float>(hi[k].v[j]);
        o1.v[j] = static_cast<T>(x1 * c1[j] - x2 * s1[j]);
        o2.v[j] = static_cast<T>(x2 * c2[j] + x1 * s2[j]);
      }
      T* o = os + k * S * row_len;
      *reinterpret_cast<P*>(o) = o1;
      *reinterpret_cast<P*>(o + half) = o2;
    }
  }
}

// Any strides, any half: one (b, h, s, j) pair of columns j and j + half a thread.
template <typename T>
__global__ void __launch_bounds__(THREADS)
rotary_strided_kernel(const T* __restrict__ x, const T* __restrict__ cosp, const T* __restrict__ sinp,
                      T* __restrict__ out, int H, int S, int half, int64_t stride_xb, int64_t stride_xh,
                      int64_t stride_xs, int64_t stride_xd, int64_t stride_cs, int64_t stride_cd, int64_t stride_ss,
                      int64_t stride_sd, int64_t total) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * THREADS + threadIdx.x;
  if (t >= total) return;
  const int j = static_cast<int>(t % half);
  int64_t r = t / half;
  const int s = static_cast<int>(r % S);
  r /= S;
  const int h = static_cast<int>(r % H);
  const int64_t b = r / H;
  const T* xr = x + b * stride_xb + h * stride_xh + s * stride_xs;
  const float x1 = static_cast<float>(xr[j * stride_xd]);
  const float x2 = static_cast<float>(xr[(j + half) * stride_xd]);
  const float c1 = static_cast<float>(cosp[s * stride_cs + j * stride_cd]);
  const float c2 = static_cast<float>(cosp[s * stride_cs + (j + half) * stride_cd]);
  const float s1 = static_cast<float>(sinp[s * stride_ss + j * stride_sd]);
  const float s2 = static_cast<float>(sinp[s * stride_ss + (j + half) * stride_sd]);
  T* o = out + ((b * H + h) * S + s) * (2 * static_cast<int64_t>(half));
  o[j] = static_cast<T>(x1 * c1 - x2 * s1);
  o[j + half] = static_cast<T>(x2 * c2 + x1 * s2);
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % Config::VEC_BYTES == 0; }

template <typename T>
void launch(const at::Tensor& x, const at::Tensor& c, const at::Tensor& sn, at::Tensor& out, cudaStream_t stream) {
  constexpr int VEC = Config::VEC_BYTES / sizeof(T);
  const int64_t B = x.size(0), H = x.size(1), S = x.size(2), half = x.size(3) / 2;
  const T* xp = x.data_ptr<T>();
  const T* cp = c.data_ptr<T>();
  const T* sp = sn.data_ptr<T>();
  T* op = out.data_ptr<T>();
  const bool vec = half % VEC == 0 && x.stride(3) == 1 && c.stride(1) == 1 && sn.stride(1) == 1 &&
                   x.stride(0) % VEC == 0 && x.stride(1) % VEC == 0 && x.stride(2) % VEC == 0 &&
                   c.stride(0) % VEC == 0 && sn.stride(0) % VEC == 0 && aligned(xp) && aligned(cp) && aligned(sp) &&
                   aligned(op);
  if (vec) {
    const int64_t total = B * ((H + HEADS - 1) / HEADS) * S * (half / VEC);
    const dim3 grid(static_cast<unsigned>((total + THREADS - 1) / THREADS));
    rotary_vec_kernel<T><<<grid, THREADS, 0, stream>>>(xp, cp, sp, op, H, S, half, x.stride(0), x.stride(1),
                                                       x.stride(2), c.stride(0), sn.stride(0), total);
  } else {
    const int64_t total = B * H * S * half;
    const dim3 grid(static_cast<unsigned>((total + THREADS - 1) / THREADS));
    rotary_strided_kernel<T><<<grid, THREADS, 0, stream>>>(xp, cp, sp, op, H, S, half, x.stride(0), x.stride(1),
                                                           x.stride(2), x.stride(3), c.stride(0), c.stride(1),
                                                           sn.stride(0), sn.stride(1), total);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

at::Tensor rotary_head_reuse(at::Tensor x, at::Tensor cos, at::Tensor sin) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 4, "x must be a 4-D CUDA tensor [batch, heads, seq, head_dim]");
  TORCH_CHECK(x.size(3) % 2 == 0, "head_dim must be even");
  for (const at::Tensor& t : {cos, sin}) {
    TORCH_CHECK(t.is_cuda() && t.dim() == 2 && t.size(0) == x.size(2) && t.size(1) == x.size(3),
                "cos and sin must be CUDA tensors [seq, head_dim]");
    TORCH_CHECK(t.scalar_type() == x.scalar_type(), "x, cos and sin must have the same dtype");
  }
  TORCH_CHECK(x.size(1) <= INT32_MAX && x.size(2) <= INT32_MAX && x.size(3) <= INT32_MAX, "dimensions too large");
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty({x.size(0), x.size(1), x.size(2), x.size(3)}, x.options());
  if (out.numel() == 0) return out;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  switch (x.scalar_type()) {
    case at::kHalf: launch<at::Half>(x, cos, sin, out, stream); break;
    case at::kBFloat16: launch<at::BFloat16>(x, cos, sin, out, stream); break;
    case at::kFloat: launch<float>(x, cos, sin, out, stream); break;
    default: TORCH_CHECK(false, "rotary: float16, bfloat16 or float32 only, got ", x.scalar_type());
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
        name=f"ksuite_rotary_head_reuse_{digest}",
        cpp_sources=CPP_SOURCE,
        cuda_sources=cuda_source,
        functions=["rotary_head_reuse"],
        extra_cuda_cflags=["-O3"],
        verbose=False,
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        _extension()

    def forward(self, x, cos, sin):
        return _extension().rotary_head_reuse(x, cos, sin)
