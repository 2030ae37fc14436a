__kernel void kernel_1(__global int* o1) {
  __local int tile0[8];
  __local int tile1[8];
  __local int tile2[1];
  __local long tile3[8];
  __local int rn_tile[8];
  __local uchar mn_tile[8];
  __local char row[8];
  for (long i = 0; i < 8; ++i) { tile1[i] = 0; rn_tile[i] = (int)i; mn_tile[i] = i < 1; row[i] = 0; }
  for (int it = 0; it < 2; ++it) {
    for (long j = 0; j < 8; ++j) tile0[j] = (int)((uint)tile1[j] + (uint)(int)row[j]);
    for (long j = 0; j < 8; ++j) tile1[j] = tile0[j];
  }
  for (long i = 0; i < 8; ++i) tile0[i] = tile1[i] ^ (-1);
  tile2[0] = tile0[0];
  for (long i = 0; i < 7; ++i) { int t = tile2[0]; tile2[0] = max(t, tile0[1 + i]); }
  int m = tile2[0];
  bool c = m > 2;
  if (c) {
  } else {
    for (long i = 0; i < 8; ++i) tile3[i] = (long)rn_tile[i];
    for (long i = 0; i < 8; ++i) {
      long off = tile3[i];
      int v = tile0[i];
      bool on = mn_tile[i];
      if (on) { int old = atomic_add((volatile __global int*)(o1 + off), v); }
    }
  }
}
