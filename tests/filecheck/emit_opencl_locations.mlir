// PASS: emit-opencl
// A comment names the user's line (the op's `loc`) once for each group of statements
// from it: the line's text where the file can be read, else the op's name.

// CHECK-LABEL: __kernel void k(
// CHECK:       // memref.load  (kern.py:12)
// CHECK-NEXT:  float [[V:.*]] = arg0[arg1];
// CHECK-NEXT:  float [[W:.*]] = [[V]] * [[V]];
// CHECK-NEXT:  // memref.store  (kern.py:14)
// CHECK-NEXT:  arg0[0] = [[W]];
// CHECK-NOT:   //
func.func @k(%x: memref<?xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%i] : memref<?xf32> loc("kern.py":12:9)
  %w = arith.mulf %v, %v : f32 loc("kern.py":12:9)
  memref.store %w, %x[%c0] : memref<?xf32> loc("kern.py":14:5)
  return
}
