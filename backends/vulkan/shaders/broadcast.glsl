// NumPy broadcasting for the elementwise kernels over K inputs (binary.comp,
// equal.comp, where.comp), one place for the index arithmetic.
// p: 0 n (output elements), 1 rank, 2.. dims[rank], then for each input k
//    strides[rank] in elements (0 along the dims it repeats).
// Needs common.glsl (p[]).

// Element offset in input k (of K <= 3) of output element i, for every k.
uint[3] broadcast_offsets(uint i, int K) {
  int rank = p[1];
  uint o[3] = uint[3](0u, 0u, 0u);
  uint rest = i;
  for (int d = rank - 1; d >= 0; --d) {
    uint dim = uint(p[2 + d]);
    uint c = rest % dim;
    rest /= dim;
    for (int k = 0; k < K; ++k) o[k] += c * uint(p[2 + (k + 1) * rank + d]);
  }
  return o;
}
