"""The algorithms' kernels: compiled CPU kernels (`invdyn.kernels.cpu`), batched and
differentiable torch kernels (`invdyn.kernels.torch`), and fused CUDA rnea
(`invdyn.kernels.unrolled`, `invdyn.kernels.triton`)."""
