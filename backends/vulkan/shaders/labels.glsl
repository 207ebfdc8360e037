// i64 labels/indices bound as 32-bit words (two per element, little
// endian). label_at(k, C) is the label of row k if it lies in [0, C), else
// -1 (a shader cannot report the run-time error cpu_ref raises; callers
// poison their result with NaN instead).
int label_at(uint k, int C) {
  uint lo = lab[pc.off[LABEL_BINDING - 1] + 2u * k];
  uint hi = lab[pc.off[LABEL_BINDING - 1] + 2u * k + 1u];
  return hi == 0u && lo < uint(C) ? int(lo) : -1;
}
