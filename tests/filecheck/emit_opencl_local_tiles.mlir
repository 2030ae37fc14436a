// PASS: emit-opencl
// Work-group tiles (memref.alloc), wherever they are allocated, are __local arrays
// declared at kernel scope (OpenCL allows them nowhere else); an f16 tile holds float.
// A private array (alloca) is a plain array there.

// CHECK-LABEL: __kernel void k(
// CHECK-NEXT:  __local float tile0[4 * 8];
// CHECK-NEXT:  float tile1[4];
// CHECK-NEXT:  __local float tile2[16];
// CHECK-NOT:   __local
// CHECK:       for (
// CHECK:         tile2[0] = 
func.func @k(%x: memref<?xf32>, %y: memref<?xf16>, %n: index) attributes {opencl.local_size = array<i64: 8, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tile = memref.alloc() : memref<4x8xf32>
  %mine = memref.alloca() : memref<4xf32>
  %v = memref.load %x[%c0] : memref<?xf32>
  memref.store %v, %tile[%c0, %c1] : memref<4x8xf32>
  memref.store %v, %mine[%c1] : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %half = memref.alloc() : memref<16xf16>
    %h = memref.load %y[%i] : memref<?xf16>
    memref.store %h, %half[%c0] : memref<16xf16>
    %w = memref.load %half[%c0] : memref<16xf16>
    memref.store %w, %y[%i] : memref<?xf16>
  }
  %u = memref.load %tile[%c0, %c1] : memref<4x8xf32>
  %p = memref.load %mine[%c1] : memref<4xf32>
  %s = arith.addf %u, %p : f32
  memref.store %s, %x[%c0] : memref<?xf32>
  return
}
